# A unittest runner that prints TAP, so that meson shows every case.
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys
import traceback
import unittest


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.number = 0

    def _name(self, test):
        return test.id().split('.', 1)[-1]

    def _report(self, test, ok, directive=''):
        self.number += 1
        line = '%s %d - %s' % ('ok' if ok else 'not ok', self.number, self._name(test))
        if directive:
            line += ' # ' + directive
        print(line, flush=True)

    def _diagnose(self, err):
        for line in ''.join(traceback.format_exception(*err)).splitlines():
            print('# ' + line, flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._report(test, True)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._report(test, False)
        self._diagnose(err)

    def addError(self, test, err):
        super().addError(test, err)
        self._report(test, False)
        self._diagnose(err)

    def addSubTest(self, test, subtest, err):
        # A failing subtest fails its test: without this it would print no
        # line at all (unittest calls addSuccess only when all passed).
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._report(subtest, False)
            self._diagnose(err)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._report(test, True, 'SKIP ' + reason.replace('\n', ' '))

    # TAP's TODO: "not ok ... # TODO" is a known failure (meson: EXPECTEDFAIL,
    # which passes); "ok ... # TODO" a fixed one (UNEXPECTEDPASS, which
    # fails the test until the expectation is lifted).
    def _todo(self, test):
        method = getattr(test, getattr(test, '_testMethodName', ''), None)
        return 'TODO ' + getattr(method, 'todo_reason', 'expected failure')

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._report(test, False, self._todo(test))
        self._diagnose(err)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._report(test, True, self._todo(test) + ': it passes now, lift the expectation')


def expected_failure(reason):
    """unittest.expectedFailure with a reason TAP shows (# TODO reason)."""
    def decorate(func):
        func.todo_reason = reason
        return unittest.expectedFailure(func)
    return decorate


def main(module='__main__'):
    """Runs every TestCase of @module and exits 0 when all passed."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[module])
    print('TAP version 13', flush=True)
    result = TapResult()
    suite.run(result)
    print('1..%d' % result.number, flush=True)
    sys.exit(0 if result.wasSuccessful() else 1)
