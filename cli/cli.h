/* cli.h: the subcommands of the `commlab` command. Each takes argv with
 * argv[0] = its own name and returns the process exit status (0 ok,
 * 1 failure, 2 bad usage or bad input). */
#ifndef COMMLAB_CLI_H
#define COMMLAB_CLI_H

int cl_cli_topo(int argc, char **argv);
int cl_cli_doctor(int argc, char **argv);
int cl_cli_sim(int argc, char **argv);

#endif /* COMMLAB_CLI_H */
