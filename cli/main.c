/* main.c: `commlab`, the toolkit's command line: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"topo", cl_cli_topo, "topo FILE [--json]      parse an nvidia-smi topo -m or NCCL XML file"},
    {"doctor", cl_cli_doctor, "doctor [--json]         what is installed, which backends can run"},
    {"sim", cl_cli_sim, "sim --system S ...      predict a collective on a recorded system"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: commlab COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %s\n", commands[i].help);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "commlab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
