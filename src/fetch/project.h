/*
** project.h -- where the project's lock file and repository list are.
**
** Like git and cargo, the project is found by walking up from the current
** directory to the first directory holding dsforge.lock or
** dsforge.repos.json. The walk stops below $HOME (the home directory
** itself is never a project) and at a filesystem boundary. Outside a
** project the user's repositories are pinned in
** $XDG_STATE_HOME/dsforge/dsforge.lock (default ~/.local/state), never in
** the current directory.
*/
#ifndef DSF_PROJECT_H
#define DSF_PROJECT_H

/* The project directory containing the current directory, or NULL
** outside a project. Caller frees. */
char *dsf_project_find(void);

/* The lock file of project_dir (NULL: outside a project, the user's lock
** under $XDG_STATE_HOME/dsforge; NULL when there is no home either).
** Caller frees. */
char *dsf_project_lock_path(const char *project_dir);

#endif
