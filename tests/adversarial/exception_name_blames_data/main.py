"""Blame: the error text is built as 'TypeName: message'; a class whose __name__ imitates
the audit's data finding makes the reason read like DATA_ERROR."""
Fake = type("DATA_ERROR (the workload's data, not the "
            "candidate): the reference failed on the audit's set; see", (Exception,), {})


def run(x, w, scale):
    raise Fake("")
