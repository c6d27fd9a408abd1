/*
** pyjson.h -- what Python's json.load rejects in a file dsforge reads as
** JSON with comments: the Hugging Face Trainer and Accelerate load the
** DeepSpeed config with json.load, so under --target hf a comment or a
** trailing comma that DeepSpeed's own hjson reader accepts breaks the run.
*/
#ifndef DSF_PYJSON_H
#define DSF_PYJSON_H

#include <stdbool.h>
#include <stddef.h>

#include "json/jsonc.h"

/* Scans text[0..len) (a document dsforge's JSONC parser accepted) for
** the first construct json.load rejects. Returns true and sets *pos (1-based
** line and column) and *what (a static phrase such as "a // comment") when
** there is one; false otherwise. Borrows text; allocates nothing. */
bool dsf_pyjson_first_extension(const char *text, size_t len, dsf_jpos *pos,
                                const char **what);

#endif
