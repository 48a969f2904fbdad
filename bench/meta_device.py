"""The meta device costs the same whatever the tensor sizes: shapes and dtypes only, no buffers.

Each case runs a program on meta tensors of a large size and, as the floor, the same program
on meta tensors of a tiny size; a ratio near 1x says the cost does not grow with the data.
The cpu run of the small program is printed beside it for scale. (These numbers replace the
timed assertions that tests/test_eager_meta.py used to make: 0.5 s for the 4096 matmul
program, 0.2 s for the 8192x8192 random draws.)

    python bench/meta_device.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import per_call, table  # noqa: E402

import mindtorch_v2 as mt  # noqa: E402


def matmul_program(n, device="meta"):
    def run():
        w = mt.ones(n, n, device=device)
        return (mt.ones(n, n, device=device) @ w).relu().sum(0)
    return run


def random_draws(n, device="meta"):
    def run():
        t = mt.randn(n, n, device=device)
        t.uniform_()
        t.normal_()
        return t
    return run


def main():
    rows = [
        ("ones @ ones, relu, sum: 4096 / 4 (meta)", per_call(matmul_program(4096)), per_call(matmul_program(4)),
         "~1x"),
        ("randn, uniform_, normal_: 8192 / 8 (meta)", per_call(random_draws(8192)), per_call(random_draws(8)),
         "~1x"),
        ("ones @ ones, relu, sum: 4 meta / 4 cpu", per_call(matmul_program(4)), per_call(matmul_program(4, "cpu"))),
        ("randn, uniform_, normal_: 8 meta / 8 cpu", per_call(random_draws(8)), per_call(random_draws(8, "cpu"))),
    ]
    table(rows, "meta device: large against tiny sizes (best of 5; ratio = first / second)")


if __name__ == "__main__":
    main()
