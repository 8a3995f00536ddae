"""Per-op profile of PyTorch eager on one zoo train step, to set beside `hlox run --profile`
(issue 3 "Speed"): loads the example inputs whole_graph.py wrote (--workdir), runs the direct
step (forward, (out*out).mean(), backward, in-place SGD) on the given thread count with every
pool pinned as whole_graph.py does, and prints torch.profiler's table of self CPU time by op
and input shapes, over --repeat steps after a warm-up.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/models/torch_op_profile.py \\
        --model encoder_layer_train --example WORKDIR/encoder_layer_train_example [--threads 1]"""

import argparse
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--example", required=True, help="DIR with 0.npy, 1.npy, ... (whole_graph.py --workdir)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, default=25)
    args = ap.parse_args()
    import numpy as np
    import torch
    from hlox import zoo
    from whole_graph import _pin_blas_threads, sgd_train_step

    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.threads)
    _pin_blas_threads(args.threads)
    ctor, _, train = zoo.ZOO[args.model]
    model = ctor()
    model.train(train)
    n_params = len(list(model.parameters()))
    n_bufs = len(list(model.buffers()))
    n_in = len([f for f in os.listdir(args.example) if f[0].isdigit()])
    tensors = [torch.from_numpy(np.load(os.path.join(args.example, f"{i}.npy"))) for i in range(n_in)]
    with torch.no_grad():
        for p, t in zip(model.parameters(), tensors):
            p.copy_(t)
        for b, t in zip(model.buffers(), tensors[n_params:]):
            b.copy_(t)
    xs = tensors[n_params + n_bufs:]
    step = sgd_train_step(model, xs, torch.optim.SGD(model.parameters(), lr=0.5))

    for _ in range(2):
        step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(args.repeat):
            step()
    print(f"{args.model}, {args.threads} thread(s), {args.repeat} steps (times are totals over the steps)")
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows))
    print(prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total", row_limit=args.rows))


if __name__ == "__main__":
    main()
