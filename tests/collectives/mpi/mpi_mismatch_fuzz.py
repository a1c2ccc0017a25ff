#!/usr/bin/python3
"""Seeded random MPI mismatches (docs/mpi.md, issue 30): rank 0 and rank 1 run two programs.

Each case draws a 2-replica program whose one collective sits in a while loop,

    loop TRIPS times: x = back_to_f32[8](KIND(reshape(convert(x, TYPE), DIMS), GROUPS))

(KIND: all-reduce, all-gather, reduce-scatter, all-to-all or collective-permute), then a second
program equal to it or differing in one or two of kind, element type, shape, replica groups and
trip count, and runs

    mpirun -np 1 xjit run P0.hlo --random-args --replicas 2 ... : -np 1 xjit run P1.hlo ...

on both backends, with --collective-timeout as the
safety net only. Every run must end within seconds in one of two ways:
  - an error that names the mismatch ("replicas disagree on their collectives", or a rank that
    finished its run while the other waits in a collective), never the timeout;
  - success, each rank's result files equal to replica R's of `xjit run P_R --replicas 2` in
    process. Success is allowed only when the two programs are the same, or when neither rank's
    collective involves the other (both over groups of one replica: no data moves).

  mpi_mismatch_fuzz.py XJIT [--cases N] [--seed S] [--timeout S] [--budget S]

Cases are drawn from the seed in order; once --budget seconds have passed no new case starts (a
loaded machine runs a prefix of the same cases).

Exits 1 on any failure, 77 (skip) when mpirun is absent or xjit was built without MPI; prints each
case's programs and command when it fails, so it reproduces with the same seed.
"""
import argparse, os, random, shutil, sys, tempfile, time

from mpi_cli_test import reducer, results, run

KINDS = ('all-reduce', 'all-gather', 'reduce-scatter', 'all-to-all', 'collective-permute')
TYPES = ('f32', 's32', 'f64', 'bf16', 'u8')
DIMS = ('8', '2,4', '4,2')
# Every replica, the same group out of rank order, or each replica alone.
GROUPS = ('{}', '{{1,0}}', '{{0},{1}}')
TRIPS = (1, 2, 3)
FIELDS = ('kind', 'type', 'dims', 'groups', 'trips')

# What a run that detects the mismatch says (either rank may report first).
MISMATCH = ('replicas disagree on their collectives', 'finished its run of the program',
            'waits in a collective that')


def normalised(spec):
    # A collective-permute has pairs, not groups: its groups field means nothing.
    spec = dict(spec)
    if spec['kind'] == 'collective-permute':
        spec['groups'] = '{}'
    return spec


def communicates(spec):
    """Whether the collective moves data between the two replicas."""
    return spec['kind'] == 'collective-permute' or spec['groups'] != '{{0},{1}}'


def program(spec):
    """The module text of `spec` (see the file comment)."""
    kind, t, dims, groups, trips = (spec[f] for f in FIELDS)
    sizes = [int(d) for d in dims.split(',')]
    members = 1 if groups == '{{0},{1}}' else 2
    out = list(sizes)
    attrs = ''
    if kind == 'all-reduce':
        attrs = ', replica_groups=%s, to_apply=sum' % groups
    elif kind == 'all-gather':
        out[0] *= members
        attrs = ', replica_groups=%s, dimensions={0}' % groups
    elif kind == 'reduce-scatter':
        out[0] //= members
        attrs = ', replica_groups=%s, dimensions={0}, to_apply=sum' % groups
    elif kind == 'all-to-all':
        attrs = ', replica_groups=%s, dimensions={0}' % groups
    else:
        attrs = ', source_target_pairs={{0,1},{1,0}}'
    elements = 1
    for s in out:
        elements *= s
    shape = '%s[%s]' % (t, dims)
    result = '%s[%s]' % (t, ','.join(map(str, out)))
    if elements > 8:
        back = '  ROOT b = f32[8] slice(flat), slice={[0:8]}\n'
    elif elements < 8:
        back = ('  zero = f32[] constant(0)\n'
                '  ROOT b = f32[8] pad(flat, zero), padding=0_%d\n' % (8 - elements))
    else:
        back = '  ROOT b = f32[8] copy(flat)\n'
    return ('HloModule mismatch, replica_count=2\n' + reducer('sum', t, 'add') + '''
step {
  x = f32[8] parameter(0)
  v = %s[8] convert(x)
  y = %s reshape(v)
  c = %s %s(y)%s
  f = f32[%s] convert(c)
  flat = f32[%d] reshape(f)
%s}

cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(%d)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[8] call(x), to_apply=step
  ROOT t = (s32[], f32[8]) tuple(j, y)
}

ENTRY main {
  x = f32[8] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[8]) tuple(zero, x)
  w = (s32[], f32[8]) while(s), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
''' % (t, shape, result, kind, attrs, ','.join(map(str, out)), elements, back, trips))


def draw(rng):
    """Two specs: equal (one case in five) or differing in one or two fields."""
    first = {'kind': rng.choice(KINDS), 'type': rng.choice(TYPES), 'dims': rng.choice(DIMS),
             'groups': rng.choice(GROUPS), 'trips': rng.choice(TRIPS)}
    second = dict(first)
    if rng.random() >= 0.2:
        choices = {'kind': KINDS, 'type': TYPES, 'dims': DIMS, 'groups': GROUPS, 'trips': TRIPS}
        for field in rng.sample(FIELDS, rng.choice((1, 1, 2))):
            second[field] = rng.choice([v for v in choices[field] if v != first[field]])
    return normalised(first), normalised(second)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('xjit')
    parser.add_argument('--cases', type=int, default=20)
    parser.add_argument('--seed', type=int, default=30)
    parser.add_argument('--timeout', type=float, default=60,
                        help='seconds one mpirun may take before it counts as a hang')
    parser.add_argument('--budget', type=float, default=0,
                        help='start no case after this many seconds (0: no budget)')
    args = parser.parse_args()
    mpirun = shutil.which('mpirun')
    if mpirun is None:
        print('SKIP: mpirun not found (Debian: apt-get install openmpi-bin)')
        return 77
    xjit = os.path.abspath(args.xjit)
    # The collective timeout is the safety net: a case that needs it fails.
    safety = str(int(args.timeout // 2))
    rng = random.Random(args.seed)
    failures = 0
    work = tempfile.mkdtemp(prefix='mpi_mismatch_fuzz.')
    start = time.monotonic()
    try:
        ran = 0
        for case in range(args.cases):
            if args.budget and time.monotonic() - start > args.budget:
                print('budget of %g s spent: %d of %d cases ran' % (args.budget, case, args.cases))
                break
            ran += 1
            specs = draw(rng)
            paths = []
            for rank, spec in enumerate(specs):
                paths.append(os.path.join(work, 'case%d_rank%d.hlo' % (case, rank)))
                with open(paths[-1], 'w') as f:
                    f.write(program(spec))
            same = specs[0] == specs[1]
            differs = ', '.join('%s %s/%s' % (f, specs[0][f], specs[1][f]) for f in FIELDS
                                if specs[0][f] != specs[1][f])
            spec = ' '.join(str(specs[0][f]) for f in FIELDS)
            label = 'case %d: %s' % (case, 'the same program, ' + spec if same else
                                     spec + '; ' + differs)
            for backend in ('jit', 'interpreter'):
                out = os.path.join(work, 'mpi%d_%s' % (case, backend))
                common = ['--random-args', '--replicas', '2', '--backend=' + backend,
                          '--collective-timeout', safety, '--out', out]
                cmd = [mpirun, '--oversubscribe', '-np', '1', xjit, 'run', paths[0]] + common + [
                    ':', '-np', '1', xjit, 'run', paths[1]] + common
                rc, _, err, seconds = run(cmd, args.timeout)
                if rc != 0 and 'built without MPI' in err:
                    print('SKIP: this xjit was built without MPI')
                    return 77
                problem = ''
                if rc == 124:
                    problem = 'did not end within %g s' % args.timeout
                elif rc != 0:
                    if same:
                        problem = 'the same program failed'
                    elif not any(m in err for m in MISMATCH):
                        problem = 'failed without naming the mismatch'
                elif not same and (communicates(specs[0]) or communicates(specs[1])):
                    problem = 'different collectives that move data both succeeded'
                else:
                    # Each rank's results are its program's, replica R's, in process.
                    for rank in (0, 1):
                        threads = os.path.join(work, 'threads%d_%d_%s' % (case, rank, backend))
                        trc, _, terr, _ = run([xjit, 'run', paths[rank], '--random-args',
                                               '--replicas', '2', '--backend=' + backend,
                                               '--out', threads], args.timeout)
                        replica = 'replica_%d' % rank
                        if trc != 0:
                            problem = 'in process, program %d fails: %s' % (
                                rank, terr.strip()[-300:])
                        elif (results(os.path.join(threads, replica)) !=
                              results(os.path.join(out, replica))):
                            problem = 'rank %d differs from replica %d in process' % (rank, rank)
                        if problem:
                            break
                print('%s %s (%s): exit %d in %.1f s%s' % (
                    'FAIL' if problem else 'ok', label, backend, rc, seconds,
                    ': ' + problem if problem else ''))
                if problem:
                    failures += 1
                    print(' '.join(cmd))
                    for rank in (0, 1):
                        print('--- program of rank %d:\n%s' % (rank, program(specs[rank])))
                    print('--- stderr:\n' + err[-1500:])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print('%d cases in %.1f s: %s' % (ran, time.monotonic() - start,
                                      'FAILED' if failures else 'PASSED'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
