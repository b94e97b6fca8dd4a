/* doctor.c: `commlab doctor`: what is installed and which backends can run. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef CL_HAVE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include "cli.h"
#include "json.h"

typedef struct finding {
    const char *name; /* backend or component */
    bool ok;
    char detail[200];
} finding;

/* True if an executable called name is on PATH. */
static bool on_path(const char *name)
{
    const char *path = getenv("PATH");
    char dir[4096];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s/%s", (int)len, path, name);
        if (access(dir, X_OK) == 0)
            return true;
        path += len + (path[len] == ':');
    }
    return false;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void check_cpu(finding *f)
{
    f->name = "cpu";
    f->ok = on_path("mpirun") && on_path("mpicc");
    snprintf(f->detail, sizeof f->detail, "%s",
             f->ok ? "Open MPI (mpirun, mpicc) found"
                   : "needs Open MPI: apt-get install openmpi-bin libopenmpi-dev");
}

static void check_sim(finding *f)
{
    f->name = "sim";
    f->ok = true;
    snprintf(f->detail, sizeof f->detail, "built in (discrete-event model of recorded systems)");
}

static void check_gpu(finding *f)
{
    f->name = "gpu";
#ifdef CL_HAVE_CUDA
    int count = 0, nccl = 0, runtime = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    ncclGetVersion(&nccl);
    cudaRuntimeGetVersion(&runtime);
    f->ok = e == cudaSuccess && count > 0;
    if (f->ok)
        snprintf(f->detail, sizeof f->detail, "%d GPU(s); CUDA runtime %d, NCCL %d", count,
                 runtime, nccl);
    else
        snprintf(f->detail, sizeof f->detail, "no usable GPU (%s); CUDA runtime %d, NCCL %d",
                 e == cudaSuccess ? "0 devices" : cudaGetErrorName(e), runtime, nccl);
#else
    f->ok = false;
    snprintf(f->detail, sizeof f->detail, "built without CUDA/NCCL (nvcc not found at build time)");
#endif
}

static void check_nic(finding *f)
{
    f->name = "nic";
    f->ok = is_dir("/sys/class/infiniband");
    snprintf(f->detail, sizeof f->detail, "%s",
             f->ok ? "RDMA devices in /sys/class/infiniband"
                   : "no RDMA device (/sys/class/infiniband is absent)");
}

static void check_net(finding *f)
{
    f->name = "net";
    bool root = geteuid() == 0, ip = on_path("ip");
    f->ok = root && ip;
    snprintf(f->detail, sizeof f->detail, "%s",
             f->ok ? "root and iproute2: network namespaces can be created"
                   : (!root ? "needs root to create network namespaces" : "needs iproute2 (ip)"));
}

static void check_cluster(finding *f)
{
    f->name = "cluster";
    f->ok = on_path("sbatch") && on_path("srun");
    snprintf(f->detail, sizeof f->detail, "%s",
             f->ok ? "Slurm client commands found" : "no Slurm (sbatch/srun not on PATH)");
}

static void check_tool(finding *f, const char *name, const char *package)
{
    f->name = name;
    f->ok = on_path(name);
    snprintf(f->detail, sizeof f->detail, "%s", f->ok ? "found" : package);
}

int cl_cli_doctor(int argc, char **argv)
{
    bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
    finding backends[6], tools[4];
    check_cpu(&backends[0]);
    check_sim(&backends[1]);
    check_gpu(&backends[2]);
    check_nic(&backends[3]);
    check_net(&backends[4]);
    check_cluster(&backends[5]);
    check_tool(&tools[0], "gnuplot", "missing: apt-get install gnuplot-nox (plots are skipped)");
    check_tool(&tools[1], "hwloc-info", "missing: apt-get install hwloc libhwloc-dev");
    check_tool(&tools[2], "nvcc", "missing: GPU code is not compiled");
    check_tool(&tools[3], "nvidia-smi", "missing: no NVIDIA driver");

    if (json) {
        cl_json j;
        cl_json_begin(&j, stdout);
        cl_json_object_start(&j, NULL);
        cl_json_object_start(&j, "backends");
        for (int i = 0; i < 6; i++) {
            cl_json_object_start(&j, backends[i].name);
            cl_json_bool(&j, "available", backends[i].ok);
            cl_json_string(&j, "detail", backends[i].detail);
            cl_json_object_end(&j);
        }
        cl_json_object_end(&j);
        cl_json_object_start(&j, "tools");
        for (int i = 0; i < 4; i++)
            cl_json_bool(&j, tools[i].name, tools[i].ok);
        cl_json_object_end(&j);
        cl_json_object_end(&j);
        return cl_json_end(&j) == CL_OK ? 0 : 1;
    }
    printf("backends:\n");
    for (int i = 0; i < 6; i++)
        printf("  %-8s %-4s %s\n", backends[i].name, backends[i].ok ? "yes" : "no",
               backends[i].detail);
    printf("tools:\n");
    for (int i = 0; i < 4; i++)
        printf("  %-11s %s\n", tools[i].name, tools[i].detail);
    return 0;
}
