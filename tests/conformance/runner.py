"""Run CPython regression test modules and print one JSON line per module.

Usage: python3 runner.py MODULE...   (e.g. test_os test_posix)

Standard library only; runs the same way natively and inside pyvisor.  For
each module it prints {"module", "tests": {test_id: outcome}, "error"}
where outcome is "pass", "fail", "error", "skip" or "xfail" (expected
failure, counted as passing).  The message of a failure or error is kept
(first 300 characters of the last traceback line) so that differences can
be classified.
"""
import json
import os
import sys
import tempfile
import unittest


class Collect(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcomes = {}
        self.messages = {}

    @staticmethod
    def _id(test):
        return test.id()

    def addSuccess(self, test):
        self.outcomes[self._id(test)] = "pass"

    def _bad(self, test, err, kind):
        tid = self._id(test)
        self.outcomes[tid] = kind
        text = self._exc_info_to_string(err, test).strip().splitlines()
        self.messages[tid] = (text[-1] if text else "")[:300]

    def addFailure(self, test, err):
        self._bad(test, err, "fail")

    def addError(self, test, err):
        self._bad(test, err, "error")

    def addSkip(self, test, reason):
        self.outcomes[self._id(test)] = "skip"
        self.messages[self._id(test)] = str(reason)[:300]

    def addExpectedFailure(self, test, err):
        self.outcomes[self._id(test)] = "xfail"

    def addUnexpectedSuccess(self, test):
        self._bad(test, (AssertionError, AssertionError("unexpected success"), None), "fail")

    def addSubTest(self, test, subtest, err):
        if err is not None:
            kind = "fail" if issubclass(err[0], test.failureException) else "error"
            self._bad(subtest, err, kind)


def run(module):
    out = {"module": module, "tests": {}, "messages": {}, "error": None}
    try:
        mod = __import__("test." + module, fromlist=["*"])
        suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    except unittest.SkipTest as e:
        out["error"] = "skipped: " + str(e)[:300]
        return out
    except BaseException as e:  # import failure
        out["error"] = "import: %s: %s" % (type(e).__name__, str(e)[:300])
        return out
    res = Collect()
    try:
        suite.run(res)
    except BaseException as e:
        out["error"] = "run: %s: %s" % (type(e).__name__, str(e)[:300])
    out["tests"] = res.outcomes
    out["messages"] = res.messages
    return out


def main():
    real_stdout = os.dup(1)
    # Tests print; keep our JSON on the original stdout only.
    devnull = os.open(os.devnull, os.O_WRONLY)
    for module in sys.argv[1:]:
        work = tempfile.mkdtemp(prefix="conf-")
        os.chdir(work)
        os.dup2(devnull, 1)
        result = run(module)
        os.dup2(real_stdout, 1)
        os.write(real_stdout, (json.dumps(result) + "\n").encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
