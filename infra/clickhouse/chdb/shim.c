#include "shim.h"

#include <dlfcn.h>
#include <signal.h>
#include <pthread.h>
#include <string.h>

static struct {
	svc_chdb_connection *(*connect)(int, char **);
	void (*close_conn)(svc_chdb_connection *);
	svc_chdb_result *(*query_n)(svc_chdb_connection, const char *, size_t, const char *, size_t);
	svc_chdb_result *(*query_with_params_n)(svc_chdb_connection, const char *, size_t, const char *, size_t,
		const char *const *, const size_t *, const char *const *, const size_t *, size_t);
	svc_chdb_result *(*stream_query_n)(svc_chdb_connection, const char *, size_t, const char *, size_t);
	svc_chdb_result *(*stream_query_with_params_n)(svc_chdb_connection, const char *, size_t, const char *, size_t,
		const char *const *, const size_t *, const char *const *, const size_t *, size_t);
	svc_chdb_result *(*stream_fetch_result)(svc_chdb_connection, svc_chdb_result *);
	void (*stream_cancel_query)(svc_chdb_connection, svc_chdb_result *);
	void (*destroy_query_result)(svc_chdb_result *);
	char *(*result_buffer)(svc_chdb_result *);
	size_t (*result_length)(svc_chdb_result *);
	double (*result_elapsed)(svc_chdb_result *);
	uint64_t (*result_rows_read)(svc_chdb_result *);
	uint64_t (*result_bytes_read)(svc_chdb_result *);
	uint64_t (*result_storage_rows_read)(svc_chdb_result *);
	uint64_t (*result_storage_bytes_read)(svc_chdb_result *);
	uint64_t (*result_rows_written)(svc_chdb_result *);
	uint64_t (*result_bytes_written)(svc_chdb_result *);
	const char *(*result_error)(svc_chdb_result *);
	void (*set_signal_handlers_enabled)(int);
} api;

#define RESOLVE(field, name)                                   \
	do {                                                       \
		*(void **)(&api.field) = dlsym(handle, name);          \
		if (api.field == NULL) return "missing symbol " name; \
	} while (0)

const char *svc_chdb_load(const char *path) {
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL) {
		const char *err = dlerror();
		return err != NULL ? err : "dlopen failed";
	}
	RESOLVE(connect, "chdb_connect");
	RESOLVE(close_conn, "chdb_close_conn");
	RESOLVE(query_n, "chdb_query_n");
	RESOLVE(query_with_params_n, "chdb_query_with_params_n");
	RESOLVE(stream_query_n, "chdb_stream_query_n");
	RESOLVE(stream_query_with_params_n, "chdb_stream_query_with_params_n");
	RESOLVE(stream_fetch_result, "chdb_stream_fetch_result");
	RESOLVE(stream_cancel_query, "chdb_stream_cancel_query");
	RESOLVE(destroy_query_result, "chdb_destroy_query_result");
	RESOLVE(result_buffer, "chdb_result_buffer");
	RESOLVE(result_length, "chdb_result_length");
	RESOLVE(result_elapsed, "chdb_result_elapsed");
	RESOLVE(result_rows_read, "chdb_result_rows_read");
	RESOLVE(result_bytes_read, "chdb_result_bytes_read");
	RESOLVE(result_storage_rows_read, "chdb_result_storage_rows_read");
	RESOLVE(result_storage_bytes_read, "chdb_result_storage_bytes_read");
	RESOLVE(result_rows_written, "chdb_result_rows_written");
	RESOLVE(result_bytes_written, "chdb_result_bytes_written");
	RESOLVE(result_error, "chdb_result_error");
	RESOLVE(set_signal_handlers_enabled, "chdb_set_signal_handlers_enabled");
	return NULL;
}

// NSIG covers the real-time signals too; the Go runtime installs handlers
// for all of them, and so may libchdb.
static struct sigaction saved[NSIG];
static int saved_ok[NSIG];

static void save_all(struct sigaction *dst, int *ok) {
	for (int sig = 1; sig < NSIG; sig++) {
		ok[sig] = sigaction(sig, NULL, &dst[sig]) == 0;
	}
}

static void restore_all(const struct sigaction *src, const int *ok) {
	for (int sig = 1; sig < NSIG; sig++) {
		if (ok[sig] && sig != SIGKILL && sig != SIGSTOP) {
			sigaction(sig, &src[sig], NULL);
		}
	}
}

svc_chdb_connection *svc_chdb_connect(int argc, char **argv, int disable_handlers) {
	// chdb_connect also gives the calling thread (a Go runtime thread) the engine's own
	// alternate signal stack, which the engine frees when that connection's thread state
	// goes; the Go runtime would then take signals on freed memory. The thread's signal
	// stack and mask are restored too.
	stack_t altstack;
	int altstack_ok = sigaltstack(NULL, &altstack) == 0;
	sigset_t mask;
	int mask_ok = pthread_sigmask(SIG_SETMASK, NULL, &mask) == 0;
	save_all(saved, saved_ok);
	// Switching the engine's handlers off resets several dispositions to SIG_DFL, so it
	// runs inside the save/restore bracket too.
	if (disable_handlers) api.set_signal_handlers_enabled(0);
	svc_chdb_connection *conn = api.connect(argc, argv);
	restore_all(saved, saved_ok);
	if (altstack_ok) {
		altstack.ss_flags &= ~SS_ONSTACK;
		sigaltstack(&altstack, NULL);
	}
	if (mask_ok) pthread_sigmask(SIG_SETMASK, &mask, NULL);
	return conn;
}

void svc_chdb_close_conn(svc_chdb_connection *conn) { api.close_conn(conn); }

svc_chdb_result *svc_chdb_query_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen) {
	return api.query_n(*conn, q, qlen, f, flen);
}

svc_chdb_result *svc_chdb_query_with_params_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen,
	const char *const *names, const size_t *name_lens, const char *const *values, const size_t *value_lens, size_t count) {
	return api.query_with_params_n(*conn, q, qlen, f, flen, names, name_lens, values, value_lens, count);
}

svc_chdb_result *svc_chdb_stream_query_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen) {
	return api.stream_query_n(*conn, q, qlen, f, flen);
}

svc_chdb_result *svc_chdb_stream_query_with_params_n(svc_chdb_connection *conn, const char *q, size_t qlen, const char *f, size_t flen,
	const char *const *names, const size_t *name_lens, const char *const *values, const size_t *value_lens, size_t count) {
	return api.stream_query_with_params_n(*conn, q, qlen, f, flen, names, name_lens, values, value_lens, count);
}

svc_chdb_result *svc_chdb_stream_fetch_result(svc_chdb_connection *conn, svc_chdb_result *res) {
	return api.stream_fetch_result(*conn, res);
}

void svc_chdb_stream_cancel_query(svc_chdb_connection *conn, svc_chdb_result *res) { api.stream_cancel_query(*conn, res); }
void svc_chdb_destroy_query_result(svc_chdb_result *res) { api.destroy_query_result(res); }
char *svc_chdb_result_buffer(svc_chdb_result *res) { return api.result_buffer(res); }
size_t svc_chdb_result_length(svc_chdb_result *res) { return api.result_length(res); }
double svc_chdb_result_elapsed(svc_chdb_result *res) { return api.result_elapsed(res); }
uint64_t svc_chdb_result_rows_read(svc_chdb_result *res) { return api.result_rows_read(res); }
uint64_t svc_chdb_result_bytes_read(svc_chdb_result *res) { return api.result_bytes_read(res); }
uint64_t svc_chdb_result_storage_rows_read(svc_chdb_result *res) { return api.result_storage_rows_read(res); }
uint64_t svc_chdb_result_storage_bytes_read(svc_chdb_result *res) { return api.result_storage_bytes_read(res); }
uint64_t svc_chdb_result_rows_written(svc_chdb_result *res) { return api.result_rows_written(res); }
uint64_t svc_chdb_result_bytes_written(svc_chdb_result *res) { return api.result_bytes_written(res); }
const char *svc_chdb_result_error(svc_chdb_result *res) { return api.result_error(res); }

static struct sigaction snap[NSIG];
static int snap_ok[NSIG];

void svc_signal_snapshot(void) { save_all(snap, snap_ok); }

int svc_signal_dispositions_differ(void) {
	int n = 0;
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction now;
		if (!snap_ok[sig] || sigaction(sig, NULL, &now) != 0) continue;
		// SA_RESTORER differs by who installed the handler (the Go runtime or libc), not by
		// what the handler does.
		int mask = ~0x04000000; // SA_RESTORER, which glibc does not export
		if (now.sa_handler != snap[sig].sa_handler || (now.sa_flags & mask) != (snap[sig].sa_flags & mask)) n++;
	}
	return n;
}

void *svc_thread_altstack(void) {
	stack_t ss;
	if (sigaltstack(NULL, &ss) != 0) return NULL;
	return ss.ss_sp;
}
