"""The dataset on disk: the files' models (``schema``), reading and indexing a root
(``repository``), the content-addressed tensor store and its resolvers (``store``,
``tensorfile``, ``lfs``, ``hub_resolver``), ``Dataset`` (``dataset``), solutions' and
references' sources (``sources``), suites, the reference cache, dtypes, codecs and
``DataError``. Imports nothing of the audit."""
