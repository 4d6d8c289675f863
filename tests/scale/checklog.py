"""checklog.py: the scale checks' shared tally.

check() counts a result and prints a FAIL line, same() compares two files byte for byte,
summary() prints the counts and gives the exit status.
"""
_failures = []
_passed = 0


def check(ok, what):
    global _passed
    if ok:
        _passed += 1
    else:
        _failures.append(what)
        print("FAIL:", what)


def same(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def summary(name):
    print(f"{name}: {_passed} passed, {len(_failures)} failed")
    return 1 if _failures else 0
