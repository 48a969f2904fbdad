"""The profiler's hook slots in eager: None unless a torch.profiler session records on some thread.

`tensor_bind` and the backward engine check one slot per call (`op`, `node`), so eager pays a single
`is not None` test when nothing is profiled. mindtorch_v2.profiler installs its timing functions here
while any thread records and removes them when the last session stops; the functions themselves keep
the per-thread state (a thread without a session of its own runs its ops untimed, as in PyTorch).

    op(tensor_bind, prim, args, params)   -> calls tensor_bind(prim, args, params, True), timed
    node(run, name, args)                  -> calls run(*args, _timed=True) as backward node `name`
"""
op = None
node = None


def install(op_hook, node_hook):
    """Route eager ops and backward nodes through the profiler's timing functions."""
    global op, node
    op, node = op_hook, node_hook


def uninstall():
    global op, node
    op = node = None
