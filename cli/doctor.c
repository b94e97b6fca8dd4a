/* doctor.c: `commlab doctor`: what is installed and which backends can run. */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
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
    char detail[400];
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
#ifdef CL_HAVE_MPI
    f->ok = on_path("mpirun");
    snprintf(f->detail, sizeof f->detail, "%s",
             f->ok ? "Open MPI (mpirun) found"
                   : "needs Open MPI: apt-get install openmpi-bin libopenmpi-dev");
#else
    f->ok = false;
    snprintf(f->detail, sizeof f->detail,
             "NOT BUILT: this build has no MPI (MPI=no, or no mpicc when it was built)");
#endif
}

static void check_sim(finding *f)
{
    f->name = "sim";
    f->ok = true;
    snprintf(f->detail, sizeof f->detail, "built in (discrete-event model of recorded systems)");
}

/* The nvcc that a build would use, found as mk/find-cuda.sh finds it: $CUDA_PATH,
 * /usr/local/cuda, PATH, then the newest /usr/local/cuda-*. Empty when there is none. */
static void find_nvcc(char *out, size_t n)
{
    const char *fixed[] = {getenv("CUDA_PATH"), "/usr/local/cuda"};
    out[0] = '\0';
    for (int i = 0; i < 2; i++)
        if (fixed[i] && *fixed[i]) {
            snprintf(out, n, "%s/bin/nvcc", fixed[i]);
            if (access(out, X_OK) == 0)
                return;
        }
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(out, n, "%.*s/nvcc", (int)len, path);
        if (len && access(out, X_OK) == 0)
            return;
        path += len + (path[len] == ':');
    }
    char best[256] = "";
    DIR *d = opendir("/usr/local");
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "cuda-", 5) == 0 && strverscmp(e->d_name, best) > 0) {
            snprintf(out, n, "/usr/local/%s/bin/nvcc", e->d_name);
            if (access(out, X_OK) == 0)
                snprintf(best, sizeof best, "%s", e->d_name);
        }
    if (d)
        closedir(d);
    if (best[0])
        snprintf(out, n, "/usr/local/%s/bin/nvcc", best);
    else
        out[0] = '\0';
}

/* The NVIDIA kernel driver's version: /proc/driver/nvidia/version, else what
 * nvidia-smi says. Empty when neither answers. */
static void driver_version(char *out, size_t n)
{
    out[0] = '\0';
    char line[512];
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (f) {
        if (fgets(line, sizeof line,
                  f)) { /* "NVRM version: NVIDIA UNIX ... Module  580.95.05  ..." */
            char *m = strstr(line, "Module");
            if (m && sscanf(m + 6, " %63s", out) == 1) {
                fclose(f);
                return;
            }
        }
        fclose(f);
    }
    if (!on_path("nvidia-smi"))
        return;
    FILE *p = popen("nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null", "r");
    if (!p)
        return;
    if (fgets(line, sizeof line, p) && line[0] >= '0' && line[0] <= '9') {
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(out, n, "%.60s", line);
    }
    pclose(p);
}

static char nvcc_path[512], driver[64];

static void check_gpu(finding *f)
{
    f->name = "gpu";
#ifdef CL_HAVE_CUDA
    int count = 0, nccl = 0, runtime = 0, api = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    ncclGetVersion(&nccl);
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&api);
    Dl_info where = {0};
    const char *lib =
        dladdr((void *)ncclGetVersion, &where) && where.dli_fname ? where.dli_fname : "?";
    f->ok = e == cudaSuccess && count > 0;
    if (f->ok)
        snprintf(f->detail, sizeof f->detail,
                 "%d GPU(s); CUDA runtime %d, driver API %d; NCCL %d (%s)", count, runtime, api,
                 nccl, lib);
    else
        snprintf(f->detail, sizeof f->detail,
                 "built, but no usable GPU here (%s); CUDA runtime %d; NCCL %d (%s)",
                 e == cudaSuccess ? "0 devices" : cudaGetErrorName(e), runtime, nccl, lib);
#else
    f->ok = false;
    snprintf(f->detail, sizeof f->detail,
             "NOT BUILT: this build has no GPU backend (nvcc or NCCL was missing when it was "
             "built)%s%s",
             nvcc_path[0] ? "; nvcc is now at " : "", nvcc_path[0] ? nvcc_path : "");
    if (nvcc_path[0])
        snprintf(f->detail + strlen(f->detail), sizeof f->detail - strlen(f->detail),
                 ": rebuild (make clean; make)");
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
    /* Device numbers as nvidia-smi shows them, like every lab program. */
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    find_nvcc(nvcc_path, sizeof nvcc_path);
    driver_version(driver, sizeof driver);
    finding backends[6], tools[4];
    check_cpu(&backends[0]);
    check_sim(&backends[1]);
    check_gpu(&backends[2]);
    check_nic(&backends[3]);
    check_net(&backends[4]);
    check_cluster(&backends[5]);
    check_tool(&tools[0], "gnuplot", "missing: apt-get install gnuplot-nox (plots are skipped)");
    check_tool(&tools[1], "hwloc-info", "missing: apt-get install hwloc libhwloc-dev");
    tools[2].name = "nvcc";
    tools[2].ok = nvcc_path[0] != '\0';
    snprintf(tools[2].detail, sizeof tools[2].detail, "%s",
             tools[2].ok ? nvcc_path : "missing: GPU code is not compiled (no CUDA toolkit)");
    check_tool(&tools[3], "nvidia-smi", "missing: no NVIDIA driver");
    char driver_line[120];
    snprintf(driver_line, sizeof driver_line, "%s",
             driver[0] ? driver : "none (no /proc/driver/nvidia/version, no nvidia-smi)");

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
        cl_json_object_start(&j, "build");
#ifdef CL_HAVE_CUDA
        cl_json_bool(&j, "gpu", true);
#else
        cl_json_bool(&j, "gpu", false);
#endif
#ifdef CL_HAVE_MPI
        cl_json_bool(&j, "mpi", true);
#else
        cl_json_bool(&j, "mpi", false);
#endif
        cl_json_object_end(&j);
        cl_json_string(&j, "driver", driver[0] ? driver : NULL);
        cl_json_string(&j, "nvcc", nvcc_path[0] ? nvcc_path : NULL);
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
    printf("driver:\n  %-11s %s\n", "nvidia", driver_line);
    printf("tools:\n");
    for (int i = 0; i < 4; i++)
        printf("  %-11s %s\n", tools[i].name, tools[i].detail);
    return 0;
}
