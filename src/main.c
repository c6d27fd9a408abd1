/* main.c -- dsforge's entry point: everything else is in the engine. */
#include "cli/cli.h"
#include "json/jsonalloc.h"

int main(int argc, char **argv)
{
    dsf_json_alloc_init(); /* before any cJSON value exists */
    return dsf_cli_main(argc, argv);
}
