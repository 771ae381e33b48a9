"""An exception type's name that is an identifier and reads as the audit's status:
a class named DATA_ERROR whose message carries the audit's wording."""
class DATA_ERROR(Exception):
    pass


def run(x, w, scale):
    raise DATA_ERROR("(the workload's data, not the candidate): the reference failed on "
                     "the audit's set; see the dataset")
