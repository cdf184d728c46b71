/* What the parts of letterbox_tui.core.speed._scanio share (see _scanio.c): the limits,
 * one file's read (item) and the split of its header (span), and the functions one part
 * gives the others. */
#ifndef LETTERBOX_SCANIO_H
#define LETTERBOX_SCANIO_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIRST_READ 4096
#define MAX_HEADER 32768
#define READ_LIMIT (MAX_HEADER + 8)
#define MAX_LINE 4096
#define MAX_FIELDS 128
#define CHUNK 2048
#define MAX_THREADS 8
#define SCANIO_DIGEST 16 /* bytes of the header cache's content hash */

typedef struct {
    int32_t ks, kl, vs, vl;
} span;

typedef struct {
    const char *name;
    int stage;
    int err;
    struct stat st;
    char *buf;
    Py_ssize_t len;
    Py_ssize_t end;  /* fast path: the end of the closing '---' line */
    int nf;          /* fast path: number of fields; -1 when parse_header must judge */
    span *f;         /* fast path: the nf fields (malloc'd, exactly nf) */
    unsigned char digest[SCANIO_DIGEST]; /* fast path: BLAKE2b-128 of the header through `end` */
} item;

/* Everything an item holds besides itself. */
static inline void
item_free(item *it)
{
    free(it->buf);
    free(it->f);
    it->buf = NULL;
    it->f = NULL;
}

typedef struct {
    char text[48];
    Py_ssize_t len;
    PyObject *str;
    int known;  /* its row in the field table, or -1 */
} key_slot;

#define KEY_SLOTS 64
#define MAX_TABLE 32
#define MAX_KEY 31

typedef struct {
    PyObject *seat, *folder, *prefix, *names;  /* borrowed from the caller's arguments */
    Py_ssize_t from;                           /* the index in names of the first item */
    int joined;                                /* prefix is "seat/folder/" (Letter.path joins them) */
} builder;

/* _scanio_header.c: the header's split, in C buffers, without the GIL */
Py_ssize_t scanio_find_close(const char *b, Py_ssize_t n, Py_ssize_t from, int at_end_ok, Py_ssize_t *end);
int scanio_parse_fast(item *it);

/* _scanio_letters.c: one read made into Python objects, and the letters made here */
int scanio_letters_init(void);
PyObject *scanio_configure(PyObject *self, PyObject *args);
int scanio_builder_init(builder *b, PyObject *spec, PyObject *names, Py_ssize_t from);
PyObject *scanio_result_of(item *it, builder *bl, Py_ssize_t index);
int scanio_key_row(const char *s, Py_ssize_t len);
int scanio_is_made(PyObject *obj);

/* _scanio_digest.c: BLAKE2b-128 (the header cache's content hash), without the GIL */
void scanio_digest(const char *data, Py_ssize_t n, unsigned char out[SCANIO_DIGEST]);

/* _scanio_strings.c: the strings that repeat from letter to letter, made once */
void scanio_shared_clear(void);
PyObject *scanio_key_object(const char *s, Py_ssize_t len, int *known, int hint);
PyObject *scanio_keys_tuple(PyObject *const *keys, int nf, int shared);
PyObject *scanio_value_object(const char *s, Py_ssize_t len, int share);

/* _scanio_check.c: the proof that every file stats as recorded, on threads of its own */
PyObject *scanio_check_start(PyObject *self, PyObject *args);
PyObject *scanio_check_finish(PyObject *self, PyObject *args);

#endif
