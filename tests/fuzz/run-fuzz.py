#!/usr/bin/env python3
# run-fuzz.py: one time-boxed libFuzzer run of ds-fuzz (the test fuzz-run)
#
# Copyright 2026 The ds authors
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: run-fuzz.py DS_FUZZ SEED_CORPUS WORKDIR
#
# Runs DS_FUZZ for DS_FUZZ_TIME seconds (default 60) with DS_FUZZ_JOBS
# workers (default 1), starting from the seeds, writing what it finds to
# WORKDIR/corpus (never into the source tree) and crash files to
# WORKDIR/crash-*. Prints libFuzzer's final statistics; exits non-zero when
# libFuzzer found a crash, a leak or a failed check.

import os
import subprocess
import sys

fuzzer, seeds, workdir = sys.argv[1:4]
seconds = int(os.environ.get('DS_FUZZ_TIME', '60'))
corpus = os.path.join(workdir, 'corpus')
os.makedirs(corpus, exist_ok=True)

command = [fuzzer, corpus, seeds,
           '-max_total_time=%d' % seconds,
           '-timeout=30',            # one input: a hang, not a slow step
           '-rss_limit_mb=4096',
           '-max_len=4096',
           '-print_final_stats=1',
           '-artifact_prefix=' + workdir + '/']
print('run-fuzz:', ' '.join(command), flush=True)
rc = subprocess.call(command)
if rc != 0:
    print('run-fuzz: libFuzzer failed (exit %d); replay the crash file with '
          'ds-fuzz-replay FILE (in any build) or ds-fuzz FILE' % rc)
sys.exit(rc)
