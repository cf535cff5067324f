// shim.h declares the C side of the binding: libchdb is dlopened at run
// time, so the Go package builds and vets on machines without the library.
#ifndef SVC_CHDB_SHIM_H
#define SVC_CHDB_SHIM_H

#include <stddef.h>
#include <stdint.h>

// Opaque handles, laid out as in chdb.h.
typedef struct svc_chdb_connection_ { void *internal_data; } *svc_chdb_connection;
typedef struct svc_chdb_result_ { void *internal_data; } svc_chdb_result;

// svc_chdb_load dlopens path and resolves every symbol the binding uses.
// It returns NULL on success or a static/dlerror message on failure.
const char *svc_chdb_load(const char *path);

// svc_chdb_connect calls chdb_connect with every signal disposition saved
// before and restored after, so the handlers libchdb installs (without
// SA_ONSTACK) never replace the Go runtime's. With disable_handlers it first
// calls chdb_set_signal_handlers_enabled(0), inside the same bracket.
// Callers serialize it.
svc_chdb_connection *svc_chdb_connect(int argc, char **argv, int disable_handlers);
void svc_chdb_close_conn(svc_chdb_connection *conn);

svc_chdb_result *svc_chdb_query_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen);
svc_chdb_result *svc_chdb_query_with_params_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen,
	const char *const *names, const size_t *name_lens, const char *const *values, const size_t *value_lens, size_t count);
svc_chdb_result *svc_chdb_stream_query_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen);
svc_chdb_result *svc_chdb_stream_query_with_params_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen,
	const char *const *names, const size_t *name_lens, const char *const *values, const size_t *value_lens, size_t count);
svc_chdb_result *svc_chdb_stream_fetch_result(svc_chdb_connection *conn, svc_chdb_result *res);
void svc_chdb_stream_cancel_query(svc_chdb_connection *conn, svc_chdb_result *res);
void svc_chdb_destroy_query_result(svc_chdb_result *res);

char *svc_chdb_result_buffer(svc_chdb_result *res);
size_t svc_chdb_result_length(svc_chdb_result *res);
double svc_chdb_result_elapsed(svc_chdb_result *res);
uint64_t svc_chdb_result_rows_read(svc_chdb_result *res);
uint64_t svc_chdb_result_bytes_read(svc_chdb_result *res);
uint64_t svc_chdb_result_storage_rows_read(svc_chdb_result *res);
uint64_t svc_chdb_result_storage_bytes_read(svc_chdb_result *res);
uint64_t svc_chdb_result_rows_written(svc_chdb_result *res);
uint64_t svc_chdb_result_bytes_written(svc_chdb_result *res);
const char *svc_chdb_result_error(svc_chdb_result *res);

// svc_signal_dispositions_differ reports how many signals' handlers differ
// from a snapshot taken by svc_signal_snapshot; used by tests.
void svc_signal_snapshot(void);
int svc_signal_dispositions_differ(void);

// svc_thread_altstack returns the base of the calling thread's alternate signal stack; used
// by tests.
void *svc_thread_altstack(void);

#endif
