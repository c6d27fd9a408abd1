/*
** project.h -- the one project root every command uses.
**
** Like git and cargo, the project is found by walking up from the current
** directory to the first directory holding dsforge.lock or
** dsforge.repos.json. The walk stops below $HOME (the home directory
** itself is never a project) and at a filesystem boundary. The project's
** profiles/ and plugins/ (paths.h), its repository list and its lock file
** (fetch/project.h) all come from that directory, so a command gives the
** same answer from any subdirectory.
*/
#ifndef DSF_CORE_PROJECT_H
#define DSF_CORE_PROJECT_H

#define DSF_PROJECT_LOCK_FILE "dsforge.lock"
#define DSF_PROJECT_REPOS_FILE "dsforge.repos.json"

/* The project directory containing the current directory (absolute), or
** NULL outside a project. Found once per process; borrowed, reachable
** until exit. */
const char *dsf_project_root(void);

#endif
