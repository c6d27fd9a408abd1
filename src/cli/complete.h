/*
** complete.h -- `dsforge __complete WORD...`, the hidden command the
** completion scripts call: the candidates for the last WORD (the one
** being completed, possibly empty), one per line, from the command
** tables and the live search path (profiles, their tiers and params).
*/
#ifndef DSF_COMPLETE_H
#define DSF_COMPLETE_H

#include <stddef.h>

#include "cli/help.h"

/* words[0..n): the words after "dsforge", the last being completed;
** cmds[0..ncmds): every command. Prints the candidates; returns 0. */
int dsf_complete(int n, char **words, const dsf_command *const *cmds,
                 size_t ncmds);

#endif
