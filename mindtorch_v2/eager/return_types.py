"""torch.return_types: the structseqs ops return (values and indices of max, the factors of a
decomposition): tuples with a named property per field, printed as torch prints them, pickled by name,
and pytree nodes flattening as PyTorch's do (children in order, keys [0], [1], ...)."""
import operator

from ..core import pytree as _pytree

__all__ = []  # reached as torch.return_types.<name>, not re-exported at the top level


def structseq(name, fields=("values", "indices")):
    """A torch.return_types.<name>: a tuple of len(fields) items, each also readable by its field name.

    Built as torch builds one, from one sequence (`T([a, b])`, optionally with a dict as a second argument);
    the library's own code may also pass the items positionally (`T(a, b)`)."""
    n = len(fields)

    def __new__(cls, *args):
        if len(args) == n and not isinstance(args[-1], dict):  # the library's positional form
            return tuple.__new__(cls, args)
        if len(args) == 2 and not isinstance(args[1], dict):
            raise TypeError(f"torch.return_types.{name}() takes a dict as second arg, if any")
        items = tuple(args[0]) if args else ()
        if len(items) != n:
            raise TypeError(f"torch.return_types.{name}() takes a {n}-sequence ({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (cls, (tuple(self),))

    namespace = {"__slots__": (), "__module__": __name__, "__qualname__": name, "__new__": __new__,
                 "__repr__": __repr__, "__reduce__": __reduce__, "n_fields": n, "n_sequence_fields": n,
                 "n_unnamed_fields": 0}
    namespace.update({f: property(operator.itemgetter(i), doc=f"Alias for field number {i}")
                      for i, f in enumerate(fields)})
    cls = type(name, (tuple,), namespace)
    _pytree.register_pytree_node(cls, lambda s: (list(s), None), lambda _, children: cls(*children),
                                 flatten_with_keys_fn=lambda s: ([(_pytree.SequenceKey(i), c)
                                                                  for i, c in enumerate(s)], None))
    return cls


max = structseq("max")  # noqa: A001
min = structseq("min")  # noqa: A001
sort = structseq("sort")
topk = structseq("topk")
cummax = structseq("cummax")
cummin = structseq("cummin")
median = structseq("median")
nanmedian = structseq("nanmedian")
kthvalue = structseq("kthvalue")
mode = structseq("mode")
aminmax = structseq("aminmax", ("min", "max"))
frexp = structseq("frexp", ("mantissa", "exponent"))
# linear algebra: torch.linalg's and the top-level names' factors
linalg_slogdet = structseq("linalg_slogdet", ("sign", "logabsdet"))
slogdet = structseq("slogdet", ("sign", "logabsdet"))
linalg_qr = structseq("linalg_qr", ("Q", "R"))
qr = structseq("qr", ("Q", "R"))
linalg_svd = structseq("linalg_svd", ("U", "S", "Vh"))
svd = structseq("svd", ("U", "S", "V"))
linalg_eigh = structseq("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_eig = structseq("linalg_eig", ("eigenvalues", "eigenvectors"))
linalg_inv_ex = structseq("linalg_inv_ex", ("inverse", "info"))
linalg_cholesky_ex = structseq("linalg_cholesky_ex", ("L", "info"))
linalg_solve_ex = structseq("linalg_solve_ex", ("result", "info"))
linalg_lu_factor = structseq("linalg_lu_factor", ("LU", "pivots"))
linalg_lu_factor_ex = structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
linalg_lu = structseq("linalg_lu", ("P", "L", "U"))
linalg_lstsq = structseq("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
triangular_solve = structseq("triangular_solve", ("solution", "cloned_coefficient"))
