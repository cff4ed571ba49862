/* rr trace directories (TRACE_VERSION 85): shared state of the decoder. */
#ifndef TRACEFS_RR_H
#define TRACEFS_RR_H

#include <glib.h>
#include <stdint.h>

#include "capnp/capnp.h"
#include "rr_names.h"
#include "trace.h"
#include "view.h"

struct saved_reader;
struct saved_writer;
struct stream;

/* Frame.event union tags. */
enum rr_event {
    RR_EV_INSTRUCTION_TRAP = 0, RR_EV_PATCH_SYSCALL, RR_EV_SYSCALLBUF_ABORT_COMMIT,
    RR_EV_SYSCALLBUF_RESET, RR_EV_SCHED, RR_EV_GROW_MAP, RR_EV_SIGNAL, RR_EV_SIGNAL_DELIVERY,
    RR_EV_SIGNAL_HANDLER, RR_EV_EXIT, RR_EV_SYSCALLBUF_FLUSH, RR_EV_SYSCALL,
    RR_EV_PATCH_AFTER_SYSCALL, RR_EV_PATCH_VSYSCALL, RR_EV_PATCH_TRAPPING_INSTRUCTION,
    RR_EV_COUNT
};

/* Frame.event.syscall.state of a syscall's exiting frame (0 and 1 enter). */
#define RR_SYSCALL_EXITING 2u

/* What the index pass keeps: one checkpoint per LIMIT_RR_FRAME_CHECKPOINT
 * frames (global time = position + 1).  Frame k is found by decoding
 * forward from checkpoint k / LIMIT_RR_FRAME_CHECKPOINT. */
struct rr_checkpoint {
    uint64_t offset;          /* of the block's first frame, in the uncompressed events stream */
    uint64_t data_offset;     /* in `data`: where that frame's first write lies */
    uint64_t writes_mask;     /* bit i: frame (block * N + i) has memory writes (a frames/<n>.mem/) */
    uint64_t writes_before;   /* frames with memory writes in earlier blocks */
    /* The common events join a syscall's entering frame and its exit into
     * one event (rr_events.c), so an exit so joined yields no event of its
     * own: the cuts of the common files (rr_event_cuts) start from here. */
    uint64_t joined_before;   /* joined exits in earlier blocks */
    uint64_t joined_mask;     /* bit i: frame (block * N + i) is an exit joined to an earlier block's frame */
};

/* Per thread (parallel to tids): the span its frames lie in. */
struct rr_thread_span {
    uint64_t first, last;     /* positions of its first and last frame */
};

/* Where a frame lies: enough to decode it and the frames after it. */
struct rr_frame_pos {
    uint64_t index;           /* frame position */
    uint64_t offset;          /* in the events stream */
    uint64_t data_offset;     /* in `data` */
};

struct rr_mmap {
    int64_t frame_time;
    uint64_t start, end, device, inode;
    int32_t prot, flags;
    int64_t file_offset, stat_size, stat_mtime;
    uint32_t stat_mode, stat_uid, stat_gid;
    uint16_t source;          /* 0 zero, 1 trace, 2 file */
    char *fsname;
    char *backing_file;       /* file source only */
    int has_owner;            /* frame_time names a frame: owner_tid is its tid */
    int32_t owner_tid;
};

/* clone(2)'s CLONE_THREAD in a clone task event's flags. */
#define RR_CLONE_THREAD 0x00010000

enum rr_task_kind { RR_TASK_CLONE = 0, RR_TASK_EXEC, RR_TASK_EXIT, RR_TASK_DETACH };

struct rr_task {
    int64_t frame_time;
    int32_t tid;
    uint16_t kind;
    int32_t parent_tid, clone_flags, own_ns_tid, exit_status;
    uint64_t exe_base;
    char *file_name;
    GPtrArray *cmdline;       /* char*, owned */
};

struct rr_header {
    int32_t bind_to_cpu;
    uint16_t ticks_semantics, native_arch, chaos_mode;
    int32_t rrcall_base;
    int ok, has_cpuid_faulting, preload_thread_locals;
    uint64_t xcr0;
    int32_t required_forward_compatibility;
    uint32_t runtime_page_size, preload_page_size;
    uint16_t syscallbuf_protocol;
    GBytes *uuid;
    GBytes *cpuid_records;
    uint32_t xsave_size;      /* CPUID(0xD,0).EBX, or 512 */
    uint32_t syscallbuf_hdr_size; /* 30 in rr 5.6.0, 32 in newer rr */
    char *uname[6];           /* newer rr: sysname ... domainname, or NULL */
    uint64_t exclusion_start, exclusion_end; /* chaos mode's global exclusion range */
    int rr_reads_it;          /* rr 5.6.0's TraceReader accepts it: a `version` file saying
                               * exactly 85 and a Header it takes (rr_traceinfo.c) */
};

struct rr_state {
    struct trace *trace;
    char *dir_real_path;
    struct stream *events, *data, *mmaps_stream, *tasks_stream;
    uint64_t uncompressed_bytes, compressed_bytes;
    struct rr_header header;
    uint64_t frame_count;
    GArray *checkpoints;      /* struct rr_checkpoint, one per LIMIT_RR_FRAME_CHECKPOINT frames */
    GArray *mmaps;            /* struct rr_mmap */
    GArray *tasks;            /* struct rr_task */
    GArray *tids;             /* int32, in order of first frame */
    GArray *thread_spans;     /* struct rr_thread_span, per tids[i] */
    /* Which threads have frames between /events' cuts, learned while it is
     * sized (rr_tree.c): a thread's events jumps over the rest.  NULL when
     * /events is not cut. */
    struct thread_presence *presence;
    struct view_cursor *presence_cuts;
    /* The first frame's time, which the events' ts count from, read once
     * by the event iterator (rr_events.c): 0 not yet, 1 read (its double's
     * bits), 2 unreadable. */
    int first_frame_known;
    uint64_t first_frame_bits;
    guint mmaps_attached;     /* prefix of mmaps rr dump -p shows */
    uint64_t frames_with_writes; /* how many frames have memory writes (below LIMIT_RR_MEMORY_FRAMES) */
    uint64_t initial_exec;    /* position + 1 of the first exec rr's replay processes (rr_exec.c); 0: none */
    struct trace_error_list side_errors; /* mmaps/tasks errors, reported after the frame scan's */
    GHashTable *pid_of;       /* tid -> process (thread-group leader) tid */
    GArray *process_mmaps;    /* uint32 mmap indexes, by process then index: the threads' maps */
    GArray *ps_rows;          /* rr_ps.c's processes of the task events; NULL when tasks/ps lists none */
    GArray *ps_tree_order;    /* uint32 ps_rows indexes in tasks/tree's order */
    uint64_t side_bytes;      /* what mmaps and tasks keep, against limit_table_budget(compressed_bytes) */
    unsigned names_cut;       /* names of mmaps/tasks kept cut (the first is reported) */
    int from_saved_index;     /* rebuilding from a saved index: its errors are restored by the engine */
};

/* Index-pass errors: not repeated when rebuilding from a saved index. */
#define RR_INDEX_ERROR(state, ...) \
    do { if (!(state)->from_saved_index) trace_error((state)->trace, __VA_ARGS__); } while (0)

/* ---- one decoded frame (rr_frame.c) ---- */
struct rr_mem_write {
    int32_t tid;
    uint64_t addr, size;
    struct capnp_list holes;  /* WriteHole {offset, size} */
};

struct rr_frame {
    struct capnp_message msg;
    struct capnp_struct root;
    uint64_t time;
    uint64_t data_offset;     /* in `data`: where this frame's first write lies */
    int32_t tid;
    int64_t ticks;
    double monotonic_sec;
    uint16_t arch;
    uint16_t event;
    const uint8_t *regs; size_t regs_size;
    const uint8_t *extra; size_t extra_size;
    struct capnp_list mem_writes;
    /* syscall */
    uint16_t sys_arch, sys_state, sys_extra;
    int32_t sys_number;
    int sys_failed;
    int64_t write_offset;
    struct capnp_list extra_list;     /* execFdsToClose or openedFds */
    const uint8_t *local_addr; size_t local_addr_size;
    const uint8_t *remote_addr; size_t remote_addr_size;
    /* signals */
    uint16_t siginfo_arch, disposition;
    int deterministic;
    const uint8_t *siginfo; size_t siginfo_size;
    /* syscallbuf flush */
    const uint8_t *mprotect; size_t mprotect_size;
    uint64_t in_syscallbuf_hook;
};

/* The pairing of the common events (rr_events.c): whether `f` enters a
 * syscall, and whether `f` is the exit of the syscall `enter` entered (the
 * caller checks it is the thread's next frame, at most
 * LIMIT_RR_SYSCALL_PAIR_FRAMES after it). */
gboolean rr_frame_enters_syscall(const struct rr_frame *f);
gboolean rr_frame_exits_syscall_of(const struct rr_frame *f, int32_t tid, int32_t number, uint16_t arch);

/* Reads and decodes frame `index` (0-based): from its checkpoint, decoding
 * the frames before it.  On failure the reason is in *why and the frame must
 * still be released. */
int rr_frame_load(struct rr_state *state, uint64_t index, struct rr_frame *frame, const char **why);
/* The checkpoint at or before frame `index`. */
void rr_frame_checkpoint(const struct rr_state *state, uint64_t index, struct rr_frame_pos *pos);
/* A whole-trace view's segment cuts (view_segment_cuts), one candidate per
 * frame checkpoint: `cut` is given the checkpoint's number. */
uint32_t rr_frame_cuts(const struct rr_state *state, view_cut_fn cut, struct view_cursor *cursors, uint32_t max);
/* Reads and decodes the frame at *pos and, on success, advances *pos to the
 * next frame.  Same failure contract as rr_frame_load. */
int rr_frame_read(struct rr_state *state, struct rr_frame_pos *pos, struct rr_frame *frame, const char **why);
/* Bytes of `data` the frame's first `writes` writes occupy: where write
 * `writes` lies, from the frame's data_offset. */
uint64_t rr_frame_stored_bytes(const struct rr_frame *frame, uint32_t writes);
/* Whether frame `index` has a frames/<n>.mem directory. */
int rr_frame_has_writes(const struct rr_state *state, uint64_t index);
/* Decodes an already-read message as a frame. */
int rr_frame_decode(struct rr_frame *frame, const char **why);
void rr_frame_release(struct rr_frame *frame);
/* Reports frame `index` (from 0) unreadable in /errors (`why`, or
 * "unreadable") for the view `where`: a view's `next` returns this. */
enum view_step rr_frame_error(struct rr_state *state, const char *where, uint64_t offset, uint64_t index,
                              const char *why);
int rr_mem_write_at(const struct rr_frame *frame, uint32_t i, struct rr_mem_write *out);
/* Bytes of `data` a write occupies (size minus holes, clipped). */
uint64_t rr_mem_write_stored(const struct rr_mem_write *write);
int rr_event_has_registers(uint16_t event);

/* ---- recorded memory (the `data` stream) and the per-frame side records (rr_data.c) ---- */
/* The hole-filled bytes of write i (NULL when larger than max_bytes or
 * unreadable). */
GByteArray *rr_data_write_bytes(const struct rr_state *state, const struct rr_frame *frame, uint32_t i,
                                uint64_t max_bytes);
/* Copies bytes [offset, offset+len) of the hole-filled write; returns the
 * count copied or -1. */
ssize_t rr_data_write_read(const struct rr_state *state, uint64_t data_offset, const struct rr_mem_write *w,
                           uint64_t offset, uint8_t *buf, size_t len);
/* The first task event at this global time (what rr dump -e shows). */
const struct rr_task *rr_data_task_at(const struct rr_state *state, int64_t time);
/* The mmaps rr dump -p shows at this global time. */
void rr_data_mmaps_at(const struct rr_state *state, int64_t time, guint *first, guint *count);

/* ---- rendering (rr_dump.c): `rr dump` text for one frame ---- */
enum {
    RR_DUMP_SYSCALLBUF = 1 << 0,   /* -b */
    RR_DUMP_MEMORY = 1 << 1,       /* -m */
    RR_DUMP_MMAPS = 1 << 2,        /* -p */
    RR_DUMP_TASKS = 1 << 3,        /* -e */
    RR_DUMP_SOCKETS = 1 << 4,      /* --socket-addresses */
    RR_DUMP_JSON = 1 << 8,         /* frames/<n>.json instead of text */
};
void rr_dump_frame(const struct rr_state *state, const struct rr_frame *frame, unsigned flags, GString *out);
void rr_dump_event_name(const struct rr_frame *frame, GString *out);
void rr_dump_registers(const struct rr_frame *frame, GString *out);
/* Register `name` ("rsp", "orig_eax"...) of an x86 or x86-64 frame, as
 * `rr dump` names and reads it (full width); 0 when absent. */
uint64_t rr_x86_register(const struct rr_frame *frame, const char *name);
void rr_frame_json(const struct rr_frame *frame, GString *out);
/* A socket address's family field (0 when too short), and its address as
 * text (`text` holds INET6_ADDRSTRLEN bytes): AF_INET or AF_INET6, or 0
 * for another family or an address too short for its own. */
uint16_t rr_socket_family(const uint8_t *addr, size_t size);
int rr_socket_address(const uint8_t *addr, size_t size, char *text);

/* ---- exec frames as rr's replay sees them (rr_exec.c), and the
 * environment `rr traceinfo` reads at the first one (rr_environ.c) ---- */
/* What rr reads from a frame's registers, in the frame's own arch. */
struct rr_exec_registers {
    unsigned word_bytes;          /* 4 on x86, 8 on x86-64 and aarch64 */
    uint64_t sp;
    int64_t result;               /* syscall result, signed */
    int64_t original_syscallno;
};

/* 0, or -1 when the frame's arch is unknown or its registers are shorter
 * than rr's for that arch. */
int rr_exec_registers(const struct rr_frame *f, struct rr_exec_registers *out);
/* Whether rr's replay processes this frame as a successful exec (an exiting
 * execve/execveat, not failed, not vetoed); a frame whose registers rr
 * could not judge counts too. */
int rr_frame_is_exec_exit(const struct rr_frame *f);
/* Appends `  "environ":[...]\n` (rr traceinfo's member, read from the
 * initial exec's recorded memory) or `  "environ":null\n`. */
void rr_environ_append(struct rr_state *state, GString *json);

/* ---- index pass pieces ---- */
int rr_read_header(struct rr_state *state);
/* A chunked stream from its block headers or, given `saved`, from the
 * block table saved with the index (NULL and saved->bad when it does not
 * fit the file). */
struct stream *rr_open_chunked(struct rr_state *state, const char *name, struct saved_reader *saved);
/* Scans mmaps and tasks (their errors are held until rr_finish_side_streams). */
void rr_index_side_streams(struct rr_state *state);
/* Scans the frames: checkpoints, thread spans, mmap owners. */
void rr_index_frames(struct rr_state *state);
void rr_finish_side_streams(struct rr_state *state);
/* Frees what a task record owns (its file name, its command line). */
void rr_task_free(struct rr_task *task);
void rr_build_tree(struct trace *trace);
/* Makes state->presence, once the frames are indexed or loaded. */
void rr_presence_init(struct rr_state *state);
/* /rr-traceinfo.json: `rr traceinfo TRACE`'s header part (rr_traceinfo.c). */
void rr_add_traceinfo(struct rr_state *state);
struct family *rr_memory_writes_family(struct rr_state *state);
void rr_add_task_files(struct rr_state *state, uint32_t threads_dir);
void rr_add_ps_files(struct rr_state *state, uint32_t tasks_dir);
/* How many of the first threads (state->tids) have a threads/ directory. */
guint rr_thread_dirs(const struct rr_state *state);
/* Persistent index (rr_saved.c): the checkpoints, thread spans and mmap
 * owners, so a remount skips the scan. */
int rr_save(struct trace *trace, struct saved_writer *out);
/* The tables after the block tables (rr_open_chunked read those). */
int rr_load_frames(struct rr_state *state, struct saved_reader *saved);

#endif
