#!/usr/bin/python3
"""The JIT's replicated runs against the evaluator's (the oracle).

Every module under the given directories (recursively) that contains a collective, replica-id or
partition-id runs with `xjit run M.hlo --random-args --replicas N --out DIR` on
--backend=interpreter and on --backend=jit, for N in 2 and 4. Where the interpreter succeeds the
jit must succeed with the same bits in every replica's every result (.npy files compared byte for
byte), or, for modules whose other operations the jit computes with a different rounding (dot,
convolution, transcendental functions), results within rtol 1e-4 / atol 1e-5 ('close'; bf16
results of modules that compute in bf16 within one bf16 ulp, rtol 2^-7); and
`xjit compile` must report no interpreted collective, host transfer or custom call (other
interpreted steps are listed as notes: they belong to other operations). Where the interpreter
fails the jit must fail too (an interpreted collective is then only a note: the oracle cannot run
it either, e.g. collective-reduce, or the random offsets that a ragged-all-to-all refuses); where
it times out and the jit succeeds, the run is listed as 'oracle timeout' (unchecked, not a
disagreement). Modules with num_partitions=P run R x P devices. A run whose devices would hold
more than --max-mib of arrays between them (the largest array of the module times the device
count: XLA's large-message tests move 0.1-2 GB per device) is not made, and listed as 'too large'
with its size. Prints one line per disagreement, oracle timeout or run too large, and a summary;
exits 1 on any disagreement, 77 (skip) when no directory exists.

  replicas_corpus.py XJIT DIR... [--replicas 2,4] [--timeout S] [--max-mib M] [--jobs N]
                     [--verbose]
"""
import argparse, ast, concurrent.futures, math, os, re, struct, subprocess, sys, tempfile

COLLECTIVE = re.compile(r'\b(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute|'
                        r'collective-broadcast|replica-id|partition-id|cross-replica-sum|'
                        r'ragged-all-to-all)(-start)?\(|_xla_send_recv_source_target_pairs')
INTERPRETED = re.compile(r'^interpreted: .*?\(([a-z-]+)\):')
MINE = re.compile(r'^(all-|reduce-scatter|collective-|replica-id|partition-id|ragged-|async-|'
                  r'infeed|outfeed|send|recv|custom-call)')


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, '', 'timeout'


def results(directory):
    """Every replica's result files: {replica_R/K.npy: bytes}."""
    out = {}
    for root, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(root, name)
            with open(path, 'rb') as f:
                out[os.path.relpath(path, directory)] = f.read()
    return out


def npy(data):
    """(descr, shape, payload) of a .npy file (no numpy needed)."""
    header_len_size = 2 if data[6] == 1 else 4
    n = int.from_bytes(data[8:8 + header_len_size], 'little')
    header = ast.literal_eval(data[8 + header_len_size:8 + header_len_size + n].decode('latin1'))
    return header['descr'], tuple(header['shape']), data[8 + header_len_size + n:]


ARRAY = re.compile(r'\b(pred|[su](?:4|8|16|32|64)|f8\w*|f16|bf16|f32|f64|c64|c128)\[([\d,]*)\]')
BITS = {'pred': 8, 'f16': 16, 'bf16': 16, 'f32': 32, 'f64': 64, 'c64': 64, 'c128': 128}


def largest_array_bytes(text):
    """The byte size of the module's largest array shape."""
    largest = 0
    for element, dims in ARRAY.findall(text):
        if element in BITS:
            bits = BITS[element]
        else:  # s4 ... u64 by their width; the f8 family is a byte
            bits = 8 if element.startswith('f8') else int(element[1:])
        size = math.prod(int(d) for d in dims.split(',') if d) * max(bits, 8) // 8
        largest = max(largest, size)
    return largest


FLOATS = {'<f2': 'e', '<f4': 'f', '<f8': 'd', '<c8': 'f', '<c16': 'd'}


def bf16_values(payload):
    """bf16 bits (.npy '<u2') as floats."""
    bits = struct.unpack('<%dH' % (len(payload) // 2), payload)
    return [struct.unpack('<f', struct.pack('<I', v << 16))[0] for v in bits]


def close(a, b, bf16=False):
    """Same files, floats each within rtol 1e-4 / atol 1e-5 (NaN where NaN), others equal.
    With `bf16` (the module computes in bf16, which travels as '<u2' bits), '<u2' arrays are
    read as bf16 and may differ by rtol 2^-7 (one bf16 ulp: the jit's bf16 dots round their f32
    sums once, the evaluator's its double sums)."""
    if a is None or b is None or sorted(a) != sorted(b) or not a:
        return False
    for name in a:
        (dx, sx, px), (dy, sy, py) = npy(a[name]), npy(b[name])
        if dx != dy or sx != sy or len(px) != len(py):
            return False
        if bf16 and dx == '<u2':
            pairs, rtol = zip(bf16_values(px), bf16_values(py)), 2.0 ** -7
        elif dx in FLOATS:
            code = FLOATS[dx]
            count = len(px) // struct.calcsize(code)
            pairs, rtol = zip(struct.unpack('<%d%s' % (count, code), px),
                              struct.unpack('<%d%s' % (count, code), py)), 1e-4
        else:
            if px != py:
                return False
            continue
        for x, y in pairs:
            if math.isnan(x) or math.isnan(y):
                if not (math.isnan(x) and math.isnan(y)):
                    return False
            elif not (x == y or abs(x - y) <= 1e-5 + rtol * abs(y)):
                return False
    return True


KINDS = ('same', 'close', 'both fail', 'oracle timeout', 'too large', 'disagree')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('xjit')
    parser.add_argument('dirs', nargs='+')
    parser.add_argument('--replicas', default='2,4')
    parser.add_argument('--timeout', type=float, default=60)
    parser.add_argument('--max-mib', type=float, default=256)
    parser.add_argument('--jobs', type=int, default=2)
    parser.add_argument('--verbose', action='store_true')
    args = parser.parse_args()
    modules = []
    bf16_modules = set()
    largest = {}  # module -> bytes of its largest array
    partitions = {}
    for d in args.dirs:
        if not os.path.isdir(d):
            continue
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if not name.endswith('.hlo'):
                    continue
                path = os.path.join(root, name)
                with open(path, errors='replace') as f:
                    text = f.read()
                    if COLLECTIVE.search(text):
                        modules.append(path)
                        largest[path] = largest_array_bytes(text)
                        m = re.search(r'num_partitions=(\d+)', text)
                        partitions[path] = int(m.group(1)) if m else 1
                        if 'bf16[' in text:
                            bf16_modules.add(path)
    if not modules:
        print('no modules with collectives under', args.dirs)
        return 77
    def check(path):
        """(counts, lines) for one module."""
        counts = dict.fromkeys(KINDS, 0)
        lines = []
        interpreted = []
        rc, out, err = run([args.xjit, 'compile', path], args.timeout)
        if rc == 0:
            for line in out.splitlines():
                m = INTERPRETED.match(line)
                if m:
                    interpreted.append((MINE.match(m.group(1)) is not None, line))
        oracle_ran = False
        for n in [int(x) for x in args.replicas.split(',')]:
            devices = n * partitions[path]
            mib = largest[path] * devices / 2**20
            if mib > args.max_mib:
                counts['too large'] += 1
                lines.append('TOO LARGE %s --replicas %d: %d devices x %.0f MiB (its largest array) '
                             '= %.0f MiB > --max-mib %g; not run' %
                             (path, n, devices, largest[path] / 2**20, mib, args.max_mib))
                continue
            with tempfile.TemporaryDirectory() as tmp:
                outcome = {}
                for backend in ('interpreter', 'jit'):
                    d = os.path.join(tmp, backend)
                    rc, out, err = run([args.xjit, 'run', path, '--random-args', '--replicas',
                                        str(n), '--backend=' + backend, '--out', d], args.timeout)
                    outcome[backend] = (rc, results(d) if rc == 0 else None, err.strip())
                (irc, ires, ierr), (jrc, jres, jerr) = outcome['interpreter'], outcome['jit']
                oracle_ran = oracle_ran or irc == 0
                if irc == 124 and jrc == 0:
                    # The oracle gave no answer in time: nothing to compare (a 4 x 4 device run
                    # of a 4096x1024 all-gather takes the evaluator over a minute on a busy
                    # machine). Listed, not a disagreement.
                    kind, detail = 'oracle timeout', 'the jit result is unchecked'
                elif irc != 0 and jrc != 0:
                    kind = 'both fail'
                    detail = '%s | %s' % (ierr.splitlines()[-1:], jerr.splitlines()[-1:])
                elif irc == 0 and jrc == 0 and ires == jres and ires:
                    kind, detail = 'same', ''
                elif irc == 0 and jrc == 0 and close(ires, jres, path in bf16_modules):
                    kind, detail = 'close', ''
                else:
                    kind = 'disagree'
                    detail = ('interpreter fails: ' + ierr if irc != 0 else
                              'jit fails: ' + jerr if jrc != 0 else 'results differ')[:400]
                counts[kind] += 1
                if kind == 'disagree':
                    lines.append('DISAGREE %s --replicas %d: %s' % (path, n, detail))
                elif kind == 'oracle timeout':
                    lines.append('ORACLE TIMEOUT %s --replicas %d: %s' % (path, n, detail))
                elif args.verbose:
                    lines.append('%s %s --replicas %d %s' % (kind, path, n, detail))
        for mine, line in interpreted:
            if mine and oracle_ran:
                counts['disagree'] += 1
                lines.append('INTERPRETED %s %s' % (path, line))
            else:
                lines.append('note: %s %s' % (path, line))
        return counts, lines

    counts = dict.fromkeys(KINDS, 0)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for module_counts, lines in pool.map(check, sorted(modules)):
            for key, value in module_counts.items():
                counts[key] += value
            for line in lines:
                print(line)
    print('; '.join('%s: %d' % kv for kv in counts.items()))
    return 1 if counts['disagree'] else 0


if __name__ == '__main__':
    sys.exit(main())
