/* main.c -- dsforge's entry point: everything else is in the engine. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return dsf_cli_main(argc, argv);
}
