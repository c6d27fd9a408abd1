/*
** cmds.h -- the built-in commands: each cmd_NAME.c defines dsf_cmd_NAME,
** its option table and words (help.h) with the function that runs it.
*/
#ifndef DSF_CMDS_H
#define DSF_CMDS_H

#include "cli/help.h"

extern const dsf_command dsf_cmd_gen;
extern const dsf_command dsf_cmd_list;
extern const dsf_command dsf_cmd_show;
extern const dsf_command dsf_cmd_check;
extern const dsf_command dsf_cmd_plugins;
extern const dsf_command dsf_cmd_repo;
extern const dsf_command dsf_cmd_detect;
extern const dsf_command dsf_cmd_diff;
extern const dsf_command dsf_cmd_report;
extern const dsf_command dsf_cmd_lsp;
extern const dsf_command dsf_cmd_collect;

#endif
