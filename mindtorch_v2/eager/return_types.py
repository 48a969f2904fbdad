"""torch.return_types: the named tuples ops return (values and indices of max, the factors of a
decomposition), each printed as torch prints it and pickled by name."""
import collections

__all__ = []  # reached as torch.return_types.<name>, not re-exported at the top level


def structseq(name, fields=("values", "indices")):
    """A torch.return_types.<name> look-alike: a named tuple of `fields`."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"
    return type(name, (base,), {"__slots__": (), "__module__": __name__, "__repr__": __repr__})


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
