/*
** cli.h -- the command line's entry: finds the command (built in, or
** declared by a plugin) and runs it; top-level help, `help CMD`,
** --version, the completion scripts and the man page.
*/
#ifndef DSF_CLI_H
#define DSF_CLI_H

/* Runs dsforge with argv; returns the process exit status. */
int dsf_cli_main(int argc, char **argv);

#endif
