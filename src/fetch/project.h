/*
** project.h -- where the lock file is. The project itself is found by
** core/project.h. Outside a project the user's repositories are pinned in
** $XDG_STATE_HOME/dsforge/dsforge.lock (default ~/.local/state), never in
** the current directory.
*/
#ifndef DSF_PROJECT_H
#define DSF_PROJECT_H

/* The lock file of project_dir (NULL: outside a project, the user's lock
** under $XDG_STATE_HOME/dsforge; NULL when there is no home either).
** Caller frees. */
char *dsf_project_lock_path(const char *project_dir);

#endif
