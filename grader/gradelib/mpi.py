"""The course's Open MPI settings for every mpirun a check starts (root allowed, oversubscription
for more ranks than cores, malloc on huge pages for large buffers)."""

MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1",
}
