#!/usr/bin/env python3
"""tools/gpu_calibrate.py — time dlperf's op descriptors on a GPU you have, for `dlperf import`.

A tool for the machine with the GPU (PyTorch with CUDA there; never a dependency of dlperf):
it times the ops dlperf prices — the training-step ops of chosen models, as dlperf lists them,
and sweeps of shapes per op kind — with CUDA events around each call, warm-up calls discarded,
repeated until the spread settles, and writes dlperf's import CSV (docs/import-format.md):

    key,precision,time_ms,min_ms,max_ms,stddev_ms,reps,framework,scope,device

    dlperf profile resnet50 --batch 64 --ops --csv > resnet50.ops.csv     # where dlperf runs
    tools/gpu_calibrate.py --ops resnet50.ops.csv --sweep gemm,bmm,conv,elementwise,norm \\
        --precision fp32 --out h100.csv                                   # on the GPU machine
    dlperf import h100.csv --device h100-sxm5                             # back where dlperf runs

Each op runs as PyTorch eager runs it (cuBLAS, cuDNN and PyTorch's own kernels, what a training
step issues); "scope" is "kernel": the device's time between the events around the call. With
--framework-rows every op also gets a "framework" row: the host's wall-clock time of one call
synchronised, the eager framework's cost as a user of it sees it.

--device cpu runs the same logic on PyTorch's CPU device (timed with the wall clock): how the
tool is tested where no GPU is.
"""
import argparse
import csv
import math
import random
import statistics
import sys
import time

PHASES = ("fwd", "bwd_data", "bwd_weights", "update")


def parse_key(key):
    """dlperf's op key ("conv2d bwd_data n=32 c=64 ... acc=1") as (kind, phase, variant words, fields)."""
    tokens = key.split()
    if not tokens:
        raise ValueError("empty key")
    kind, phase, words, fields = tokens[0], None, [], {}
    for t in tokens[1:]:
        if "=" in t:
            name, value = t.split("=", 1)
            fields[name] = value
        elif phase is None and t in PHASES:
            phase = t
        else:
            words.append(t)
    return kind, phase or "fwd", words, fields


def ints(fields, *names):
    return [int(fields[n]) for n in names]


class Op:
    """One descriptor made runnable: run() issues it once on tensors allocated up front."""

    def __init__(self, torch, key, device, dtype):
        self.key = key
        self.torch = torch
        self.device = device
        self.dtype = dtype
        self.run = self._build(*parse_key(key))

    def t(self, *shape, positive=False):
        x = self.torch.rand(*shape, device=self.device, dtype=self.dtype)
        return x + 0.5 if positive else x - 0.5

    def _build(self, kind, phase, words, f):
        torch, F = self.torch, self.torch.nn.functional
        builder = getattr(self, "_" + kind, None)
        if builder is None:
            raise NotImplementedError("op kind '%s' has no PyTorch form in this tool" % kind)
        return builder(torch, F, phase, words, f)

    # ---- the kinds ----

    def _gemm(self, torch, F, phase, words, f):
        m, n, k = ints(f, "m", "n", "k")
        ta, tb = f.get("ta") == "1", f.get("tb") == "1"
        a = self.t(k, m) if ta else self.t(m, k)
        b = self.t(n, k) if tb else self.t(k, n)
        a = a.t() if ta else a
        b = b.t() if tb else b
        c = self.t(m, n)
        if f.get("bias") == "1":
            bias = self.t(n)
            return lambda: torch.addmm(bias, a, b, out=c)
        if float(f.get("beta", "0")) != 0:
            return lambda: c.addmm_(a, b)
        return lambda: torch.mm(a, b, out=c)

    def _bmm(self, torch, F, phase, words, f):
        bt, m, n, k = ints(f, "b", "m", "n", "k")
        ta, tb = f.get("ta") == "1", f.get("tb") == "1"
        a = self.t(bt, k, m).transpose(1, 2) if ta else self.t(bt, m, k)
        b = self.t(bt, n, k).transpose(1, 2) if tb else self.t(bt, k, n)
        c = self.t(bt, m, n)
        if float(f.get("beta", "0")) != 0:
            return lambda: c.baddbmm_(a, b)
        return lambda: torch.bmm(a, b, out=c)

    def _conv2d(self, torch, F, phase, words, f):
        n, c, h, w, k, r, s, sh, sw, g = ints(f, "n", "c", "h", "w", "k", "r", "s", "sh", "sw", "g")
        pt, pl, pb, pr = (int(v) for v in f["p"].split(","))
        x = self.t(n, c, h, w)
        wt = self.t(k, c // g, r, s)
        if (pt, pl) != (pb, pr):  # TF SAME's odd pixel: padded first (its copy is timed with the op)
            x = F.pad(x, (pl, pr, pt, pb))
            pt = pl = 0
        y = F.conv2d(x, wt, stride=(sh, sw), padding=(pt, pl), groups=g)
        dy = torch.rand_like(y)
        if phase == "fwd":
            return lambda: F.conv2d(x, wt, stride=(sh, sw), padding=(pt, pl), groups=g)
        if phase == "bwd_data":
            return lambda: torch.nn.grad.conv2d_input(x.shape, wt, dy, stride=(sh, sw), padding=(pt, pl), groups=g)
        return lambda: torch.nn.grad.conv2d_weight(x, wt.shape, dy, stride=(sh, sw), padding=(pt, pl), groups=g)

    def _pool2d(self, torch, F, phase, words, f):
        n, c, h, w, r, s, sh, sw = ints(f, "n", "c", "h", "w", "r", "s", "sh", "sw")
        pt, pl, pb, pr = (int(v) for v in f["p"].split(","))
        x = self.t(n, c, h, w)
        if (pt, pl) != (pb, pr):
            x = F.pad(x, (pl, pr, pt, pb), value=-math.inf if "max" in words else 0.0)
            pt = pl = 0
        if "max" in words:
            fwd = lambda: F.max_pool2d(x, (r, s), (sh, sw), (pt, pl))
        else:
            fwd = lambda: F.avg_pool2d(x, (r, s), (sh, sw), (pt, pl), count_include_pad=False)
        if phase == "fwd":
            return fwd
        xg = x.clone().requires_grad_(True)
        y = (F.max_pool2d(xg, (r, s), (sh, sw), (pt, pl)) if "max" in words
             else F.avg_pool2d(xg, (r, s), (sh, sw), (pt, pl), count_include_pad=False))
        dy = torch.rand_like(y)
        return lambda: torch.autograd.grad(y, xg, dy, retain_graph=True)

    def _bias(self, torch, F, phase, words, f):
        n, c, sp = ints(f, "n", "c", "spatial")
        if phase == "fwd":
            y, b = self.t(n, c, sp), self.t(1, c, 1)
            return lambda: y.add_(b)
        dy = self.t(n, c, sp)
        return lambda: dy.sum(dim=(0, 2))

    def _act(self, torch, F, phase, words, f):
        count = int(f["count"])
        name = words[0]
        inplace = f.get("inplace") == "1"
        x = self.t(count)
        fwd = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "gelu": F.gelu}[name]
        if phase == "fwd":
            if inplace and name != "gelu":
                return {"relu": lambda: x.relu_(), "sigmoid": lambda: x.sigmoid_(), "tanh": lambda: x.tanh_()}[name]
            return lambda: fwd(x)
        y, dy = fwd(x), self.t(count)
        if name == "relu":
            return lambda: torch.ops.aten.threshold_backward(dy, y, 0)
        if name == "sigmoid":
            return lambda: torch.ops.aten.sigmoid_backward(dy, y)
        if name == "tanh":
            return lambda: torch.ops.aten.tanh_backward(dy, y)
        return lambda: torch.ops.aten.gelu_backward(dy, x)

    def _binary(self, torch, F, phase, words, f):
        count = int(f["count"])
        a, b = self.t(count, positive=True), self.t(count, positive=True)
        op = {"add": torch.add, "mul": torch.mul, "pow": torch.pow, "div": torch.div}[words[0]]
        if phase == "fwd":
            return lambda: op(a, b)
        dy = self.t(count)
        grads = {"add": lambda: (dy, dy),
                 "mul": lambda: (dy * b, dy * a),
                 "div": lambda: (dy / b, -dy * a / (b * b)),
                 "pow": lambda: (dy * b * a.pow(b - 1), dy * a.pow(b) * a.log())}
        return grads[words[0]]

    def _scalar(self, torch, F, phase, words, f):
        count = int(f["count"])
        a = self.t(count, positive=True)
        s = float(f.get("s", "2"))
        if phase == "fwd":
            return {"add": lambda: a + s, "mul": lambda: a * s, "pow": lambda: a ** s, "div": lambda: a / s}[words[0]]
        dy = self.t(count)
        return {"add": lambda: dy.clone(), "mul": lambda: dy * s, "pow": lambda: dy * s * a ** (s - 1),
                "div": lambda: dy / s}[words[0]]

    def _layernorm(self, torch, F, phase, words, f):
        n, h = ints(f, "n", "h")
        x, g, b = self.t(n, h), self.t(h), self.t(h)
        if phase == "fwd":
            return lambda: F.layer_norm(x, (h,), g, b)
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, [h], g, b, 1e-5)
        dy = self.t(n, h)
        mask = [phase == "bwd_data", phase == "bwd_weights", phase == "bwd_weights"]
        return lambda: torch.ops.aten.native_layer_norm_backward(dy, x, [h], mean, rstd, g, b, mask)

    def _softmax(self, torch, F, phase, words, f):
        n, h = ints(f, "n", "h")
        x = self.t(n, h)
        if phase == "fwd":
            return lambda: torch.softmax(x, dim=-1)
        y, dy = torch.softmax(x, dim=-1), self.t(n, h)
        return lambda: torch.ops.aten._softmax_backward_data(dy, y, -1, x.dtype)

    def _softmax_xent(self, torch, F, phase, words, f):
        n, classes = ints(f, "n", "classes")
        logits = self.t(n, classes)
        labels = torch.randint(0, classes, (n,), device=self.device)
        if phase == "fwd":
            return lambda: F.cross_entropy(logits, labels)
        lg = logits.clone().requires_grad_(True)
        loss = F.cross_entropy(lg, labels)
        return lambda: torch.autograd.grad(loss, lg, retain_graph=True)

    def _batchnorm(self, torch, F, phase, words, f):
        n, c, sp = ints(f, "n", "c", "spatial")
        x, g, b = self.t(n, c, sp), self.t(c), self.t(c)
        rm, rv = torch.zeros(c, device=self.device, dtype=self.dtype), torch.ones(c, device=self.device,
                                                                                  dtype=self.dtype)
        train = f.get("train", "1") == "1"
        if phase == "fwd":
            return lambda: F.batch_norm(x, rm, rv, g, b, training=train)
        _, mean, invstd = torch.ops.aten.native_batch_norm(x, g, b, rm, rv, True, 0.1, 1e-5)
        dy = self.t(n, c, sp)
        mask = [phase == "bwd_data", phase == "bwd_weights", phase == "bwd_weights"]
        return lambda: torch.ops.aten.native_batch_norm_backward(dy, x, g, rm, rv, mean, invstd, True, 1e-5, mask)

    def _lrn(self, torch, F, phase, words, f):
        n, c, sp, size = ints(f, "n", "c", "spatial", "size")
        x = self.t(n, c, sp, 1)
        if phase == "fwd":
            return lambda: F.local_response_norm(x, size)
        xg = x.clone().requires_grad_(True)
        y = F.local_response_norm(xg, size)
        dy = torch.rand_like(y)
        return lambda: torch.autograd.grad(y, xg, dy, retain_graph=True)

    def _dropout(self, torch, F, phase, words, f):
        count = int(f["count"])
        x = self.t(count)
        if phase == "fwd":
            return lambda: F.dropout(x, 0.5, training=True)
        mask, dy = (torch.rand(count, device=self.device) > 0.5).to(self.dtype) * 2, self.t(count)
        return lambda: dy * mask

    def _zero(self, torch, F, phase, words, f):
        x = self.t(int(f["count"]))
        return lambda: x.zero_()

    def _copy(self, torch, F, phase, words, f):
        x, y = self.t(int(f["count"])), self.t(int(f["count"]))
        return lambda: y.copy_(x)

    def _transpose(self, torch, F, phase, words, f):
        r, c = ints(f, "rows", "cols")
        x, y = self.t(r, c), self.t(c, r)
        return lambda: y.copy_(x.t())  # a contiguous transposed copy, as .transpose().contiguous()

    def _axpby(self, torch, F, phase, words, f):
        a, b, y = self.t(int(f["count"])), self.t(int(f["count"])), self.t(int(f["count"]))
        return lambda: torch.add(a, b, alpha=0.5, out=y)

    def _channel_copy(self, torch, F, phase, words, f):
        n, cd, cs, off, sp = ints(f, "n", "c_dst", "c_src", "offset", "spatial")
        y, x = self.t(n, cd, sp), self.t(n, cs, sp)
        if phase == "fwd":
            return lambda: y[:, off:off + cs, :].copy_(x)
        return lambda: x.copy_(y[:, off:off + cs, :])

    def _sgd(self, torch, F, phase, words, f):
        w, g = self.t(int(f["count"])), self.t(int(f["count"]))
        return lambda: w.add_(g, alpha=-0.01)

    def _momentum(self, torch, F, phase, words, f):
        w, g, v = self.t(int(f["count"])), self.t(int(f["count"])), self.t(int(f["count"]))

        def step():
            v.mul_(0.9).add_(g)
            w.add_(v, alpha=-0.01)
        return step

    def _rmsprop(self, torch, F, phase, words, f):
        w, g, a = self.t(int(f["count"])), self.t(int(f["count"])), self.t(int(f["count"]), positive=True)

        def step():
            a.mul_(0.9).addcmul_(g, g, value=0.1)
            w.addcdiv_(g, a.sqrt().add_(1e-7), value=-0.001)
        return step

    def _adam(self, torch, F, phase, words, f):
        count = int(f["count"])
        w, g, m, v = self.t(count), self.t(count), self.t(count), self.t(count, positive=True)

        def step():  # torch.optim.Adam's single-tensor update
            m.mul_(0.9).add_(g, alpha=0.1)
            v.mul_(0.999).addcmul_(g, g, value=0.001)
            w.addcdiv_(m, v.sqrt().add_(1e-7), value=-0.001)
        return step

    def _adamw(self, torch, F, phase, words, f):
        count = int(f["count"])
        w, g, m, v = self.t(count), self.t(count), self.t(count), self.t(count, positive=True)

        def step():  # torch.optim.AdamW's single-tensor update (decay on every element)
            w.mul_(1 - 1e-4 * 0.1)
            m.lerp_(g, 0.1)
            v.mul_(0.95).addcmul_(g, g, value=0.05)
            w.addcdiv_(m, v.sqrt().div_(0.2236).add_(1e-8), value=-1e-3)
        return step

    def _sumsq(self, torch, F, phase, words, f):
        g = self.t(int(f["count"]))
        return lambda: torch.linalg.vector_norm(g)  # clip_grad_norm_'s norm of the gradients

    def _lstm_cell(self, torch, F, phase, words, f):
        bt, hd = ints(f, "batch", "hidden")
        pre, cp, b = self.t(bt, 4 * hd), self.t(bt, hd), self.t(4 * hd)

        def cell():  # BasicLSTMCell's element-wise part, as eager PyTorch issues it
            z = pre + b
            i, j, fg, o = z.chunk(4, dim=1)
            c = cp * torch.sigmoid(fg + 1.0) + torch.sigmoid(i) * torch.tanh(j)
            return torch.tanh(c) * torch.sigmoid(o)
        return cell


# ---- timing ----

class Timer:
    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device.startswith("cuda")

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def samples(self, fn, warmup, reps, min_time_s, max_reps):
        """Per-call times (seconds): CUDA events around each call on a GPU, the wall clock on a CPU."""
        for _ in range(warmup):
            fn()
        self.sync()
        times, total = [], 0.0
        while len(times) < reps or (total < min_time_s and len(times) < max_reps):
            if self.cuda:
                start, end = self.torch.cuda.Event(enable_timing=True), self.torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                t = start.elapsed_time(end) * 1e-3
            else:
                t0 = time.perf_counter()
                fn()
                t = time.perf_counter() - t0
            times.append(t)
            total += t
        return times

    def wall(self, fn, reps):
        """The host's wall-clock time of one call synchronised, median over reps."""
        out = []
        for _ in range(reps):
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.sync()
            out.append(time.perf_counter() - t0)
        return statistics.median(out)


# ---- sweeps: shapes per op kind, dlperf's keys ----

def sweep_keys(families, seed):
    rnd = random.Random(seed)
    keys = []
    sizes = [64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192]
    if "gemm" in families:
        for _ in range(120):
            m, n, k = (rnd.choice(sizes) for _ in range(3))
            ta, tb = rnd.random() < 0.3, rnd.random() < 0.5
            keys.append("gemm m=%d n=%d k=%d ta=%d tb=%d beta=0" % (m, n, k, ta, tb))
            if rnd.random() < 0.3:
                keys.append("gemm m=%d n=%d k=%d ta=0 tb=1 beta=0 bias=1" % (m, n, k))
    if "bmm" in families:
        for _ in range(80):
            b = rnd.choice([8, 16, 32, 64, 96, 128, 256, 512, 1024])
            seq, hd = rnd.choice([64, 128, 196, 256, 384, 512, 1024, 2048]), rnd.choice([32, 64, 96, 128])
            if b * seq * seq > 1 << 29:
                continue
            keys.append("bmm b=%d m=%d n=%d k=%d ta=0 tb=1 beta=0" % (b, seq, seq, hd))  # Q K^T
            keys.append("bmm b=%d m=%d n=%d k=%d ta=0 tb=0 beta=0" % (b, seq, hd, seq))  # P V
    if "conv" in families:
        for _ in range(60):
            n = rnd.choice([8, 16, 32, 64, 128])
            c, k = rnd.choice([3, 16, 32, 64, 128, 256, 512]), rnd.choice([16, 32, 64, 128, 256, 512])
            hw, r = rnd.choice([7, 14, 28, 56, 112, 224]), rnd.choice([1, 3, 5, 7])
            st = rnd.choice([1, 1, 2])
            p = r // 2
            if n * c * hw * hw > 1 << 27 or n * k * hw * hw > 1 << 27:
                continue
            for ph in ("fwd", "bwd_data", "bwd_weights"):
                keys.append("conv2d %s n=%d c=%d h=%d w=%d k=%d r=%d s=%d sh=%d sw=%d p=%d,%d,%d,%d g=1 acc=0"
                            % (ph, n, c, hw, hw, k, r, r, st, st, p, p, p, p))
    if "elementwise" in families:
        for e in range(14, 29, 1):
            count = 1 << e
            for a in ("relu", "sigmoid", "tanh", "gelu"):
                keys.append("act fwd %s count=%d" % (a, count))
                keys.append("act bwd_data %s count=%d" % (a, count))
            for op in ("add", "mul", "div", "pow"):
                keys.append("binary fwd %s count=%d" % (op, count))
                keys.append("scalar fwd %s count=%d" % (op, count))
    if "norm" in families:
        for n in (256, 1024, 4096, 16384, 65536):
            for h in (64, 256, 768, 1024, 2048, 4096, 8192):
                if n * h > 1 << 28:
                    continue
                for ph in ("fwd", "bwd_data"):
                    keys.append("layernorm %s n=%d h=%d" % (ph, n, h))
                    keys.append("softmax %s n=%d h=%d" % (ph, n, h))
    return keys


def read_ops_csv(path):
    """Keys from `dlperf profile MODEL --ops --csv` (a 'key' column), each once."""
    seen, keys = set(), []
    with open(path, newline="") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if "key" not in row:
                sys.exit("%s: no 'key' column: expected the CSV of 'dlperf profile MODEL --ops --csv'" % path)
            if row["key"] not in seen:
                seen.add(row["key"])
                keys.append(row["key"])
    return keys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ops", action="append", default=[], help="a CSV of op keys (dlperf profile MODEL --ops --csv)")
    ap.add_argument("--key", action="append", default=[], help="one op key (repeatable)")
    ap.add_argument("--sweep", default="", help="comma list of gemm, bmm, conv, elementwise, norm")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16", "bf16"])
    ap.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu (default cuda)")
    ap.add_argument("--out", default="-", help="output CSV (default: standard output)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20, help="samples at least (default 20)")
    ap.add_argument("--min-time", type=float, default=0.2, help="and until they add up to S seconds (default 0.2)")
    ap.add_argument("--max-reps", type=int, default=500)
    ap.add_argument("--framework-rows", action="store_true", help="also a 'framework' row per op (wall clock)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device-name", help="the device column's name (default: what PyTorch calls the GPU; "
                                          "dlperf import matches it with the sheet's name and aliases)")
    a = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        sys.exit("gpu_calibrate.py: PyTorch is not installed here (it runs on the machine with the GPU)")
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("gpu_calibrate.py: --device %s: PyTorch sees no CUDA device here (--device cpu tests the tool)"
                 % a.device)
    families = [s for s in a.sweep.split(",") if s]
    bad = [s for s in families if s not in ("gemm", "bmm", "conv", "elementwise", "norm")]
    if bad:
        sys.exit("gpu_calibrate.py: --sweep %s: expected gemm, bmm, conv, elementwise, norm" % ",".join(bad))
    keys = list(a.key)
    for path in a.ops:
        keys += read_ops_csv(path)
    keys += sweep_keys(families, a.seed)
    if not keys:
        sys.exit("gpu_calibrate.py: nothing to time: give --ops, --key or --sweep")
    dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.precision]
    if a.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
        torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
        torch.backends.cudnn.benchmark = True  # cuDNN's fastest algorithm, as DeepBench times
        name = torch.cuda.get_device_name(a.device)
        framework = "PyTorch %s, CUDA %s, cuDNN %s" % (torch.__version__, torch.version.cuda,
                                                       torch.backends.cudnn.version())
    else:
        name = "cpu"
        framework = "PyTorch %s, CPU" % torch.__version__
    if a.device_name:
        name = a.device_name
    timer = Timer(torch, a.device)
    out = sys.stdout if a.out == "-" else open(a.out, "w", newline="")
    w = csv.writer(out)
    w.writerow(["key", "precision", "time_ms", "min_ms", "max_ms", "stddev_ms", "reps", "framework", "scope",
                "device"])
    done = skipped = 0
    seen = set()
    for i, key in enumerate(keys):
        if key in seen:
            continue
        seen.add(key)
        try:
            op = Op(torch, key, a.device, dtype)
        except NotImplementedError as e:
            skipped += 1
            print("gpu_calibrate.py: skipped %s: %s" % (key, e), file=sys.stderr)
            continue
        except RuntimeError as e:  # out of device memory for this shape
            skipped += 1
            print("gpu_calibrate.py: skipped %s: %s" % (key, str(e).splitlines()[0]), file=sys.stderr)
            if a.device.startswith("cuda"):
                torch.cuda.empty_cache()
            continue
        with torch.no_grad() if "bwd" not in key else torch.enable_grad():
            t = timer.samples(op.run, a.warmup, a.reps, a.min_time, a.max_reps)
        med = statistics.median(t)
        w.writerow([key, a.precision, "%.6g" % (med * 1e3), "%.6g" % (min(t) * 1e3), "%.6g" % (max(t) * 1e3),
                    "%.6g" % (statistics.pstdev(t) * 1e3), len(t), framework, "kernel", name])
        if a.framework_rows:
            wall = timer.wall(op.run, max(5, a.reps // 4))
            w.writerow([key, a.precision, "%.6g" % (wall * 1e3), "", "", "", max(5, a.reps // 4), framework,
                        "framework", name])
        done += 1
        del op
        if sys.stderr.isatty():
            print("\rgpu_calibrate.py: %d/%d ops timed" % (done, len(keys)), end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if out is not sys.stdout:
        out.close()
    print("gpu_calibrate.py: %d ops timed on %s (%s), %d skipped" % (done, name, a.precision, skipped),
          file=sys.stderr)
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
