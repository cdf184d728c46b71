/* letterbox_tui.core.speed._scanio, the strings of the letters made here that repeat from
 * letter to letter (field names, seats, types, thread pointers), made once per process
 * rather than once per letter. Runs with the GIL held. */
#include "_scanio.h"

/* Strings that repeat from letter to letter are made once per process, not once per
 * letter (at 100,000 letters each copy is megabytes):
 * - field names: one str per distinct name (up to KEY_SLOTS; the field table's first),
 *   and one tuple of them per distinct sequence of names (the last KEY_TUPLES seen);
 * - short values other than ids and times (seats, types, priorities, "true"/"false"),
 *   and pointers (a thread's letters name one thread): one str per value in a table of
 *   VALUE_SLOTS, a new value replacing the one in its place (so nearly always one). Strings are immutable: sharing one changes no
 *   answer. */
static key_slot kept_keys[KEY_SLOTS];
static int kept_used;

#define KEY_TUPLES 8
static PyObject *key_tuples[KEY_TUPLES];
static int key_tuples_next;

#define VALUE_SLOTS 4096 /* a power of two */
#define MAX_SHARED_VALUE 32
#define MAX_SHARED_POINTER 128
static PyObject *kept_values[2][VALUE_SLOTS];

void
scanio_shared_clear(void)
{
    int k;
    for (k = 0; k < kept_used; k++)
        Py_CLEAR(kept_keys[k].str);
    kept_used = 0;
    for (k = 0; k < KEY_TUPLES; k++)
        Py_CLEAR(key_tuples[k]);
    for (k = 0; k < VALUE_SLOTS; k++) {
        Py_CLEAR(kept_values[0][k]);
        Py_CLEAR(kept_values[1][k]);
    }
}

/* The str of a field name. `*known` is the name's row in the field table, -1 for another
 * name, -2 when it could not be kept (then no letter is made here from this header). */
PyObject *
scanio_key_object(const char *s, Py_ssize_t len, int *known, int hint)
{
    int i;
    PyObject *o;
    /* a writer keeps the table's order: the k-th name is most often the k-th kept */
    if (hint >= 0 && hint < kept_used && kept_keys[hint].len == len && memcmp(kept_keys[hint].text, s, (size_t)len) == 0) {
        *known = kept_keys[hint].known;
        return Py_NewRef(kept_keys[hint].str);
    }
    for (i = 0; i < kept_used; i++) {
        if (kept_keys[i].len == len && memcmp(kept_keys[i].text, s, (size_t)len) == 0) {
            *known = kept_keys[i].known;
            return Py_NewRef(kept_keys[i].str);
        }
    }
    o = PyUnicode_DecodeASCII(s, len, "strict");
    if (o == NULL)
        return NULL;
    *known = -2;
    if (kept_used < KEY_SLOTS && len <= (Py_ssize_t)sizeof(kept_keys[0].text)) {
        key_slot *k = &kept_keys[kept_used];
        memcpy(k->text, s, (size_t)len);
        k->len = len;
        k->str = Py_NewRef(o);
        k->known = scanio_key_row(s, len);
        *known = k->known;
        kept_used++;
    }
    return o;
}

/* One tuple of the kept names `keys` (new reference), shared with every letter that has
 * the same names in the same order. */
PyObject *
scanio_keys_tuple(PyObject *const *keys, int nf, int shared)
{
    int i, k;
    PyObject *t;
    for (i = 0; shared && i < KEY_TUPLES; i++) {
        t = key_tuples[i];
        if (t == NULL || PyTuple_GET_SIZE(t) != nf)
            continue;
        for (k = 0; k < nf && PyTuple_GET_ITEM(t, k) == keys[k]; k++)
            ;
        if (k == nf)
            return Py_NewRef(t);
    }
    t = PyTuple_New(nf);
    if (t == NULL)
        return NULL;
    for (k = 0; k < nf; k++)
        PyTuple_SET_ITEM(t, k, Py_NewRef(keys[k]));
    if (shared) {
        Py_XSETREF(key_tuples[key_tuples_next], Py_NewRef(t));
        key_tuples_next = (key_tuples_next + 1) % KEY_TUPLES;
    }
    return t;
}

/* The str of a value (ASCII, as the fast path admits only printable ASCII); `share`: 0
 * for a value that rarely repeats (an id, a time), 2 for a pointer (a thread's letters
 * share one; in a table of its own, as most pointers are met once), 1 for the rest. */
PyObject *
scanio_value_object(const char *s, Py_ssize_t len, int share)
{
    uint32_t h = 2166136261u;
    Py_ssize_t i;
    PyObject *o, **at;
    if (len == 0 || !share || len > (share == 2 ? MAX_SHARED_POINTER : MAX_SHARED_VALUE))
        return PyUnicode_DecodeASCII(s, len, "strict");
    for (i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    at = &kept_values[share - 1][h & (VALUE_SLOTS - 1)];
    o = *at;
    if (o != NULL && PyUnicode_GET_LENGTH(o) == len && memcmp(PyUnicode_1BYTE_DATA(o), s, (size_t)len) == 0)
        return Py_NewRef(o);
    o = PyUnicode_DecodeASCII(s, len, "strict");
    if (o != NULL)
        Py_XSETREF(*at, Py_NewRef(o));
    return o;
}
