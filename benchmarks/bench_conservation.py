"""Law counting: Jacobian rows with ``vmap(jacrev)`` vs one ``autograd.grad`` per row.

    python benchmarks/bench_conservation.py [--quick]

Both build the same (N * outputs, D) matrix of Jacobian rows at the same inputs; the table
shows the two times, their ratio, the largest absolute difference between the matrices and
the law count D - rank(W + [W, W]) obtained from each (they must agree), and the time of a
full ``count_laws`` call (with its checks that the count is determined: enough rows, a rank
reached by each half of the inputs, a clear gap; inputs doubled when one fails), its number
of inputs and its count. The Switch case shows the difference: the fixed sample gives an
inflated count, ``count_laws`` adds inputs and returns the theorem's (E m + d = 17).
"""

from __future__ import annotations

import argparse

import torch

import dltheory.conservation as cl
from dltheory import runtime


def cases(quick: bool):
    g = lambda s: torch.Generator().manual_seed(s)
    if quick:
        return {"swiglu d4 m3": (cl.SwiGLU(4, 3, 2, gen=g(0)), (4,)),
                "mha+rope d4 H2 T3": (cl.MHA(4, 2, 2, 2, 3, pe="rope", gen=g(0)), (3, 4))}
    return {"swiglu d8 m16": (cl.SwiGLU(8, 16, 4, gen=g(0)), (8,)),
            "mha+rope d8 H2 T5": (cl.MHA(8, 2, 4, 3, 5, pe="rope", gen=g(0)), (5, 8)),
            "moe top-2 d4 E4": (cl.MoE(4, 4, 4, 2, topk=2, gen=g(0)), (4,)),
            "moe switch d5 E6": (cl.MoE(5, 2, 6, 2, topk=1, gen=g(0)), (5,))}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    repeats = 1 if args.quick else 3
    print(f"{'name':22s} {'time_fast':>10s} {'time_slow':>10s} {'ratio':>7s} "
          f"{'max abs diff':>13s} {'laws fast/slow':>15s} {'count_laws':>11s} {'inputs':>7s} {'laws':>5s}")
    for name, (model, shape) in cases(args.quick).items():
        model = model.double()
        X = cl.sample_inputs(model, shape, seed=0)
        cl.jacobian_rows(model, X[:2])  # warm-up: the first torch.func call compiles helpers
        t_fast, J_fast = runtime.best_of(lambda m=model, x=X: cl.jacobian_rows(m, x), repeats)
        t_slow, J_slow = runtime.best_of(lambda m=model, x=X: cl.jacobian_rows_loop(m, x), repeats)
        B = cl.brackets(model, X, J_fast.shape[1], seed=1)
        n_fast = J_fast.shape[1] - cl.numrank(torch.cat([J_fast, B]))[0]
        n_slow = J_slow.shape[1] - cl.numrank(torch.cat([J_slow, B]))[0]
        diff = (J_fast - J_slow).abs().max().item()
        t_count, c = runtime.best_of(lambda m=model, s=shape: cl.count_laws(m, in_shape=s), 1)
        print(f"{name:22s} {t_fast:10.4f} {t_slow:10.4f} {t_slow / t_fast:7.1f} "
              f"{diff:13.2e} {n_fast:>7d}/{n_slow:<7d} {t_count:11.3f} {c.n_inputs:7d} {c.laws:5d}")


if __name__ == "__main__":
    main()
