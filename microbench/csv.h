/* microbench/csv.h — a reader of CSV files as published measurement sets write them
 * (RFC 4180: fields separated by commas, quoted with double quotes where they hold commas,
 * quotes or line breaks, a quote inside a quoted field doubled; LF or CRLF line ends).
 * NeuSight's files quote CUDA kernel names full of commas; DeepBench's tidy files quote
 * precision descriptions. Records are read one at a time with the line each starts on, so
 * that an error can name FILE:LINE.
 */
#ifndef DLPERF_CSV_H
#define DLPERF_CSV_H

#include <stdbool.h>
#include <stdio.h>

enum { CSV_FIELDS_MAX = 64 };

typedef struct {
    FILE *f;
    const char *path;
    long line;          /* the line the next record starts on (1-based) */
    char *buf;          /* the current record's fields, NUL-separated */
    size_t cap;
    char *field[CSV_FIELDS_MAX];
    int nfields;
    long record_line;   /* the line the current record started on */
} CsvReader;

/* Opens path for reading; 0, or -1 with err naming the file and the reason. */
int csv_open(CsvReader *r, const char *path, char *err, size_t errlen);
void csv_close(CsvReader *r);
/* Reads the next record into r->field[0..nfields). Returns 1 for a record, 0 at the end
 * of the file, -1 with err ("FILE:LINE: ...") for a malformed one (an unterminated quote,
 * text after a closing quote, more than CSV_FIELDS_MAX fields, a NUL byte, out of memory).
 * Blank lines are skipped. */
int csv_next(CsvReader *r, char *err, size_t errlen);
/* The index of the column named `name` in a header record (exact match after trimming
 * spaces), or -1. */
int csv_column(const CsvReader *r, const char *name);

#endif
