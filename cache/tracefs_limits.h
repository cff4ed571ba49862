/* Every limit tracefs applies to numbers read from a trace, in one place.
 * A trace is untrusted input: each count, length, index and depth is
 * checked against these before it is used to allocate, loop or recurse. */
#ifndef TRACEFS_LIMITS_H
#define TRACEFS_LIMITS_H

/* ---- engine ---- */
/* Uncompressed bytes of one chunk: rr writes 1 MiB chunks, apitrace 1 MiB,
 * gzip seek regions 4 MiB; anything larger is a corrupt header. */
#define LIMIT_CHUNK_BYTES           (64u << 20)
/* Chunk size used to read uncompressed files through the cache. */
#define LIMIT_PLAIN_CHUNK_BYTES     (1u << 20)
/* A brotli or zstd chunk decoding to more than LIMIT_SUBCHUNK_THRESHOLD
 * is served as virtual sub-chunks of LIMIT_SUBCHUNK_BYTES of output, each
 * decoded by streaming from the chunk's start or from the decoder kept
 * at the end of the part before (cache/part_resume.c): a small file whose one
 * stream decodes to 64 MiB is held 1 MiB at a time, whatever the cache
 * size (so the bytes never depend on it). */
#define LIMIT_SUBCHUNK_THRESHOLD    (2u << 20)
#define LIMIT_SUBCHUNK_BYTES        (1u << 20)
/* A brotli stream or a zstd frame (one frame is the `zstd` tool's
 * default) is served as sub-chunks however big it is, up to this much
 * output (chunk_entry's 32-bit size); its parts count in the chunk table's
 * budget (stream_chunk_budget) like chunks. */
#define LIMIT_PARTED_CHUNK_BYTES    (4095u << 20)
/* The same for a gzip chunk, whose seek points can only be at deflate
 * block ends: zlib's blocks end within 8.4 MiB of output (32 Ki symbols
 * of 258 bytes at most), so only a block from another encoder, or a
 * hostile one (a 40 KB file can hold a 64 MiB block), makes a chunk this
 * long. */
#define LIMIT_GZIP_SUBCHUNK_THRESHOLD (16u << 20)
/* The largest window (log2 bytes) a streaming brotli or zstd decoder may
 * keep for a sub-chunked stream; a stream needing more is refused. */
#define LIMIT_DECODER_WINDOW_LOG    24
/* Chunks in one stream: 2^24 chunks of 1 MiB is 16 TiB of trace. */
#define LIMIT_STREAM_CHUNKS         (1u << 24)
/* One rendered record (a text line or JSON object) in a view. */
#define LIMIT_RECORD_TEXT_BYTES     (64u << 20)
/* A rendered record at least this big that a read ends inside is kept for
 * the next read (one per process), so that reading it costs one render
 * instead of one per read. */
#define LIMIT_KEPT_RECORD_MIN_BYTES (64u << 10)
/* Bytes of each member file of a trace directory the kernel is asked to
 * read ahead when an index pass opens it (posix_fadvise WILLNEED): the
 * whole of a small trace, the start of a big one, without holding up the
 * open. */
#define LIMIT_MEMBER_READ_AHEAD_BYTES (128u << 20)
/* While an index pass reads a stream, the chunks after the one it reads
 * are decompressed ahead on loader threads: at most this many chunks and
 * bytes past the reader (and an eighth of the cache), so the scan finds
 * them loaded without the loads evicting what the cache holds for others. */
#define LIMIT_STREAM_LOAD_AHEAD_CHUNKS 4u
#define LIMIT_STREAM_LOAD_AHEAD_BYTES  (8u << 20)
/* Buffers of evicted chunks a cache keeps, unused, for the loads that
 * follow (chunk_cache.c): bytes outside its budget, at most this many. */
#define LIMIT_CACHE_SPARE_BYTES     (1u << 20)
#define LIMIT_CACHE_SPARE_BUFFERS   4u
/* Distance between checkpoints of a rendered view: a read decodes at most
 * this much output before reaching the bytes it wants. */
#define LIMIT_CHECKPOINT_SPACING    (64u << 10)
/* What the checkpoints of one view may cost, from the trace's FILE size:
 * a view can render to many times its file (XRay's events.yaml is ~18x
 * its log, a compressed trace up to 1,000x), so past this share a view's
 * checkpoints are thinned (the spacing doubled) instead of growing with
 * its text.  A floor plus 1/2048 of the file (0.05 %): a walk of a tree
 * sizes every view, and XRay's tree has about twenty big ones (events,
 * per-thread and per-function views, the exports), whose checkpoints
 * together must stay well inside the 2 % the memory rule leaves the
 * index (at 1/512 and a 512 KiB floor they took 10 MiB of a 105 MB log's
 * 2 MiB). */
#define LIMIT_VIEW_CHECKPOINT_FLOOR_BYTES (64u << 10)
#define LIMIT_VIEW_CHECKPOINT_FILE_DIVISOR 2048u
static inline unsigned long long limit_view_checkpoint_bytes(unsigned long long file_bytes)
{
    return LIMIT_VIEW_CHECKPOINT_FLOOR_BYTES + file_bytes / LIMIT_VIEW_CHECKPOINT_FILE_DIVISOR;
}
/* The memory rule: the daemon's resident memory stays under cache_size +
 * 1/LIMIT_MEMORY_RULE_FILE_DIVISOR of the trace's size + the fixed part.
 * The caches keep the process LIMIT_MEMORY_CEILING_MARGIN_BYTES under it
 * (chunk_cache_set_ceiling): they see the resident memory only every
 * LIMIT_CACHE_RESIDENT_CHECK_MICROSECONDS, and what the rest of the program
 * takes between two readings must fit in the margin. */
#define LIMIT_MEMORY_RULE_FIXED_BYTES (16u << 20)
#define LIMIT_MEMORY_RULE_FILE_DIVISOR 50u
#define LIMIT_MEMORY_CEILING_MARGIN_BYTES (4u << 20)
#define LIMIT_CACHE_RESIDENT_CHECK_MICROSECONDS 1000
static inline unsigned long long limit_memory_ceiling(unsigned long long cache_bytes, unsigned long long file_bytes)
{
    return cache_bytes + file_bytes / LIMIT_MEMORY_RULE_FILE_DIVISOR + LIMIT_MEMORY_RULE_FIXED_BYTES -
           LIMIT_MEMORY_CEILING_MARGIN_BYTES;
}
/* Worker threads at most (-o threads=; the default is the online CPUs). */
#define LIMIT_WORKER_THREADS        16u
/* A FUSE thread keeps its read buffer between requests, counted against
 * the cache: the kernel's reads are up to 1 MiB (its largest FUSE request,
 * which -o read_ahead= asks for), and a buffer allocated per read came
 * from fresh pages each time, faulted in and trimmed again. */
#define LIMIT_KEPT_READ_BUFFER_BYTES (1u << 20)
/* -o read_ahead=: the kernel's read-ahead window for the mount (1 MiB
 * makes each FUSE read request the largest the kernel sends). */
#define LIMIT_DEFAULT_READ_AHEAD_BYTES (1u << 20)
#define LIMIT_READ_AHEAD_BYTES      (64u << 20)
/* Segments a record view's sizing is cut into at most (view_ops.segments):
 * a constant, so that where checkpoints fall never depends on the thread
 * count; 256 keep 16 workers busy to the end of the pass. */
#define LIMIT_VIEW_SEGMENTS         256u
/* Records (events, calls) per segment, for the formats that cut a view by
 * its records: a view of R records is cut into at most R / this segments.
 * Each costs a resumed decode and a checkpoint, so a small view is not cut
 * and a view's checkpoints stay within a few bits per record. */
#define LIMIT_SEGMENT_MIN_RECORDS   4096u
/* Default chunk cache budget (-o cache_size=). */
#define LIMIT_DEFAULT_CACHE_BYTES   (256ull << 20)
/* Entries in /errors: a damaged file can produce one per record; past this
 * only a count is kept, so a hostile file cannot grow memory through it. */
#define LIMIT_ERRORS_KEPT           10000u
/* Ends a name from a trace that was kept cut (the rest stays in the file). */
#define LIMIT_TRUNCATED_MARKER      "...[truncated]"
/* Distinct event names /summary.csv counts apart; past it the rest are
 * one "(other names)" row and /errors says so (a hostile trace can make
 * every name distinct). */
#define LIMIT_SUMMARY_NAMES         65536u
/* Open begin events /summary.csv pairs per thread, and threads it follows. */
#define LIMIT_SUMMARY_DEPTH         256u
#define LIMIT_SUMMARY_THREADS       65536u
/* Threads whose events.jsonl skips the stretches between the common
 * files' cuts that hold none of their events (engine/thread_presence.c):
 * a bit per thread and stretch, 128 KiB at most with 256 stretches. */
#define LIMIT_PRESENCE_THREADS      4096u
/* Length of a name in the tree (NAME_MAX). */
#define LIMIT_NAME_BYTES            255u
/* Nodes in the tree built at index time (huge lists use families). */
#define LIMIT_TREE_NODES            (1u << 26)
/* Tables a decoder keeps that grow with the records it decodes (apitrace's
 * pending calls, checkpoints, blobs and signatures; rr's mmaps and task
 * events) share one budget computed from the trace's FILE size, never from
 * its decoded size: a compressible container makes the two differ by
 * 1,000x, and the memory rule (peak RSS <= cache_size + 2 % of the file +
 * 16 MiB) is about the file.  The budget is the floor plus 1 % of the file,
 * leaving the other 1 % and the rest of the 16 MiB to the engine (the
 * process itself is ~6 MiB).  What does not fit is reported in /errors and
 * the tree shows what came before it. */
#define LIMIT_TABLE_FLOOR_BYTES     (4u << 20)
#define LIMIT_TABLE_FILE_DIVISOR    100u
static inline unsigned long long limit_table_budget(unsigned long long file_bytes)
{
    return LIMIT_TABLE_FLOOR_BYTES + file_bytes / LIMIT_TABLE_FILE_DIVISOR;
}

/* ---- fxt ---- */
/* Distinct (pid, tid) pairs given a threads/ directory: real traces have
 * hundreds; a hostile one could name a new thread in every event. */
/* Duration ends with no open begin, and begins that never end, the index
 * keeps of each (8 bytes each); past it they are yielded as ends / begins
 * and /errors says so. */
#define LIMIT_FXT_UNMATCHED_ENDS    (1u << 16)
#define LIMIT_FXT_THREADS           (1u << 20)
/* What a thread costs against limit_table_budget() of the file, with what
 * the tree holds for it: its directory, events, spans, info.json and
 * events.jsonl, and its process's directory, name, threads and link
 * (3.6 KiB measured with a process per thread: 16,000 threads in a 512 KB
 * file held 67 MB).  At the 4 MiB floor: 1,024 threads. */
#define LIMIT_FXT_THREAD_BYTES      4096u
/* Distinct counters (name, id) given a counters/ file. */
#define LIMIT_FXT_COUNTERS          (1u << 16)
/* Columns of one counter's CSV (argument names seen across its events). */
#define LIMIT_FXT_COUNTER_COLUMNS   256u
/* Providers (each keeps its own string and thread tables). */
#define LIMIT_FXT_PROVIDERS         4096u
/* Kernel and userspace objects given their own files. */
#define LIMIT_FXT_OBJECT_FILES      (1u << 20)
/* Provider event records kept per provider ("buffer full" notices). */
#define LIMIT_FXT_PROVIDER_EVENTS   4096u
/* ---- apitrace ---- */
/* Nesting of apitrace values (arrays of structs of arrays...): GL needs 3. */
#define LIMIT_APITRACE_VALUE_DEPTH      32u
/* What a signature costs against the table budget beside its own bytes:
 * the tree's nodes and texts for it (a function's directory, calls, count
 * and signatures/functions/<id>.json: ~2 KiB measured; an enum's, bitmask's
 * or struct's JSON file).  Its strings count twice (the texts hold them
 * again).  20,000 functions in a 352 KB trace held 50 MB. */
#define LIMIT_APITRACE_FUNCTION_TREE_BYTES  2048u
#define LIMIT_APITRACE_SIGNATURE_TREE_BYTES 512u
/* Bytes of one signature string (function/argument/enum names, paths). */
#define LIMIT_APITRACE_NAME_BYTES       (64u << 10)
/* Arguments, struct members, enum values or bitmask flags in a signature;
 * also the highest argument index of a call.  Every call renders each of its
 * signature's arguments ("name = ?" when absent), so a 150-byte input could
 * render megabytes per call: fuzz builds use a smaller bound (the same checks
 * at a smaller number), which made the apitrace target about 4x faster. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define LIMIT_APITRACE_SIG_ENTRIES      1024u
#else
#define LIMIT_APITRACE_SIG_ENTRIES      65536u
#endif
/* Distinct flag values of a bitmask signature that its values are
 * matched against (in signature order; the bits of later flags print in
 * hex, with an /errors line).  GL's hold a few dozen (glPushAttrib's 22);
 * finding the flags of a value within thousands is the orthogonal-vectors
 * problem, so rendering a value tests each of these flags: this bounds the
 * cost of a value, which a hostile trace could otherwise make 65,536 tests
 * (40,000 flags and 100,000 values took 8 s). */
#define LIMIT_APITRACE_BITMASK_FLAGS    256u
/* Signature ids below this are looked up by index (a pointer each, so at
 * most 512 KiB per kind of signature); larger ones by hash. */
#define LIMIT_APITRACE_DENSE_IDS        65536u
/* Frames of one call backtrace. */
#define LIMIT_APITRACE_BACKTRACE_FRAMES 4096u
/* Calls in one trace (call numbers are kept in 32 bits). */
#define LIMIT_APITRACE_CALLS            (1ull << 32)
/* Properties in the stream header. */
#define LIMIT_APITRACE_PROPERTIES       4096u
/* Threads listed under threads/ (a damaged trace can name one per call):
 * at most this many, and what the tree holds for them (a directory,
 * events and events.jsonl: 1 KiB measured; 30,000 threads in a 297 KB
 * trace held 40 MB) within a quarter of the table budget, apart from what
 * the calls need: 512 threads at the 4 MiB floor. */
#define LIMIT_APITRACE_THREADS          65536u
#define LIMIT_APITRACE_THREAD_BYTES     2048u
/* Seek points of a gzip container: one per LIMIT_APITRACE_GZIP_SPAN of
 * output, the span doubled where the points' windows pass the table
 * budget, up to LIMIT_GZIP_LONGEST_SPAN.  A chunk is decoded whole into
 * the cache, a reader's and a read-ahead worker's at once: wider chunks
 * would pass the memory rule at a small cache_size. */
#define LIMIT_APITRACE_GZIP_SPAN        (2u << 20)
#define LIMIT_GZIP_LONGEST_SPAN         (4u << 20)
/* The index keeps nothing per call: a checkpoint every this many calls
 * (stream offset, counts, the calls pending there), and every view keyed by
 * call or frame number decodes forward from the one before it.  1024 calls
 * are ~1 ms of decoding (calls/<n>.json, a view resumed cold) and ~50 bytes
 * of index, i.e. under 0.1 byte per call (a compressed call is ~30 bytes). */
#define LIMIT_APITRACE_CHECKPOINT_CALLS 1024u
/* Checkpoints past the table budget: the index keeps every other one and
 * doubles the spacing (views decode further from the one before, same
 * bytes).  Thinning starts once checkpoints take this share of the budget. */
#define LIMIT_APITRACE_CHECKPOINT_SHARE 2u     /* 1/2 of the budget */
/* Calls entered and not (yet) left may take this share of the table
 * budget (1/8: 21,000 calls at the 4 MiB floor): a real trace has about one
 * per thread; only a hostile one enters calls by the hundred thousand
 * without leaving them, and each is also saved in the index. */
#define LIMIT_APITRACE_PENDING_SHARE    8u
/* Calls pending at a checkpoint (entered, not left: one per busy thread in
 * a real trace).  Where more are pending the checkpoint waits, so that a
 * trace entering calls it never leaves cannot make the index grow faster
 * than LIMIT_APITRACE_CHECKPOINT_PENDING x 24 bytes per checkpoint. */
#define LIMIT_APITRACE_CHECKPOINT_PENDING 64u
/* Bytes of a file the probe feeds a Brotli decoder (which has no magic to
 * go by) before it gives up waiting for the first output: a quality-11
 * stream's first meta-block header can outlast the 4 KiB head. */
#define LIMIT_APITRACE_PROBE_BROTLI_BYTES (1u << 20)
/* ---- Cap'n Proto (decoders/capnp), sized for rr's messages ---- */
/* Segments in one Cap'n Proto message (rr's frames use 1 to 3). */
#define LIMIT_CAPNP_SEGMENTS        512u
/* Words of one message: rr's biggest (a frame with an XSAVE area and
 * thousands of memory writes, an exec's command line) is far below
 * 512 Ki words (4 MiB).  A message is held whole while it is decoded, by
 * the index pass and by every worker, outside the cache: 4 MiB keeps a
 * few of them inside the memory rule's 16 MiB. */
#define LIMIT_CAPNP_WORDS           (1u << 19)
/* Words of a message a side stream may read past unheld (a record of a
 * 16 MiB file name is skipped and counted in /errors, not held). */
#define LIMIT_CAPNP_SKIP_WORDS      (1u << 22)
/* Struct nesting followed from the root (rr's schema needs 3). */
#define LIMIT_CAPNP_DEPTH           64u
/* Words a reader may visit per message word (pointer loops, shared data). */
#define LIMIT_CAPNP_TRAVERSAL_FACTOR 8u
/* Bytes of a freed message's block a thread keeps for its next message
 * (one block a thread: rr's frames are a few KiB, its big ones below). */
#define LIMIT_CAPNP_SPARE_BYTES     (128u << 10)
/* ---- rr ---- */
/* Frames in one trace (32 bytes of index per checkpoint, below: 2^28 frames
 * is 128 MiB of index). */
#define LIMIT_RR_FRAMES             (1u << 28)
/* Frames per checkpoint of the rr index: frame k is found by decoding
 * forward from checkpoint k / 64 (events offset, data offset, and a 64-bit
 * mask of the block's frames with memory writes: 64 is the mask's width).
 * 32 bytes per 64 frames is 0.5 byte per frame, under 1% of a trace (rr
 * stores ~70 compressed bytes per frame), and a lookup decodes at most 63
 * frames more (~2.5 us each from the chunk cache): see docs/formats/rr.md. */
#define LIMIT_RR_FRAME_CHECKPOINT   64u
/* MMap and TaskEvent records kept in memory. */
#define LIMIT_RR_SIDE_RECORDS       (1u << 20)
/* Bytes of a name kept from an mmaps or tasks record (fsname, backing
 * file, exec file name, each command-line argument): PATH_MAX.  A longer
 * one is kept cut, ending in LIMIT_TRUNCATED_MARKER; rr itself records
 * paths, which the kernel bounds by PATH_MAX. */
#define LIMIT_RR_NAME_BYTES         4096u
/* Unpacked bytes of one mmaps or tasks record held while it is decoded:
 * twice the usual ARG_MAX (an exec's command line is the biggest real
 * record).  A bigger record is read past and reported, not shown. */
#define LIMIT_RR_SIDE_RECORD_BYTES  (4u << 20)
/* Bytes of a task event's command line kept (all its arguments). */
#define LIMIT_RR_CMDLINE_BYTES      (64u << 10)
/* Bytes of the version file. */
#define LIMIT_RR_VERSION_BYTES      (1u << 20)
/* Frames given a memory/<n>/ directory (their keys share 40 bits with a
 * 16-bit write index). */
#define LIMIT_RR_MEMORY_FRAMES      (1u << 24)
/* Frames an rr syscall's entering frame looks ahead for its exit (the
 * events' pairing; at most 64: a bitmap in the cursor). */
#define LIMIT_RR_SYSCALL_PAIR_FRAMES 64u
/* threads/<tid>/ directories (a hostile trace can name a new tid per
 * frame): at most this many, and at most limit_table_budget() of the
 * trace's files over what one costs in the tree (its directory, events,
 * maps and events.jsonl: 1.4 KiB measured; 30,000 threads in 196 KB of
 * frames held 52 MB): 2,048 at the 4 MiB floor. */
#define LIMIT_RR_THREAD_DIRS        65536u
#define LIMIT_RR_THREAD_BYTES       2048u
/* Bytes of the "environ" member of /rr-traceinfo.json, which is held with
 * the tree: real environments are a few KiB, and Linux lets an exec take at
 * most 6 MiB of arguments and environment (with escapes, JSON can be 6x
 * that).  A bigger environment is null and /errors says so. */
#define LIMIT_RR_ENVIRON_BYTES      (1u << 20)
/* What reading environ may cost, for a hostile exec frame: its memory
 * writes (rr records a few dozen there: [stack], the mappings it keeps, its
 * patches) and their holes (a stack of 8 MiB has at most 2048 zero pages),
 * which every page read walks; the pages read (a 1 MiB environment needs
 * about 600) and the bytes copied from `data` to fill them (a few MiB). */
#define LIMIT_RR_ENVIRON_WRITES     1024u
#define LIMIT_RR_ENVIRON_HOLES      8192u
#define LIMIT_RR_ENVIRON_PAGES      4096u
#define LIMIT_RR_ENVIRON_COPY_BYTES (64u << 20)
/* Task events tasks/ps and tasks/tree list processes for: their rows (a
 * few words each, outside the tables' budget) stay under half a megabyte. */
#define LIMIT_RR_PS_TASKS           20000u
/* ---- xray ---- */
/* Threads (pid, tid pairs) in one log: more is a damaged log. */
#define LIMIT_XRAY_THREADS          (1u << 16)
/* What one thread, function id and run cost, counted together against
 * limit_table_budget() of the file: a thread's six tree nodes and their
 * view indexes once read (~2 KiB), its words in every checkpoint, and
 * what reading its events.jsonl costs each reader thread (a global merge
 * and an interval's pairing, both with a place per thread); a
 * function's three tree nodes, stats and account.csv row (~1.7 KiB); a
 * run's cursor and reader (~350 bytes) in each merge a reader thread keeps
 * (two per FUSE or worker thread: up to 18 threads) and its position in
 * every checkpoint.  Each
 * thread has at least one run.  A misaligned or forged log names a new
 * thread or function in nearly every record, or sends a thread's TSC back
 * at every record; the index stops at the first that does not fit (at the
 * 4 MiB floor: 409 threads with their runs, 2048 functions or 512 runs;
 * real logs have tens of threads and runs and hundreds of functions). */
#define LIMIT_XRAY_THREAD_BYTES     2048u
#define LIMIT_XRAY_FUNCTION_BYTES   2048u
#define LIMIT_XRAY_RUN_BYTES        8192u
/* Records indexed (counted in 32 bits per run): 2^30 is an 8 GiB FDR log. */
#define LIMIT_XRAY_RECORDS          (1ull << 30)
/* The index keeps nothing per record: per thread stretch of a buffer a
 * segment (40 bytes), per run of non-decreasing TSCs a run, and sparse
 * checkpoints of the merge.  Segments and runs together may take
 * 1/LIMIT_XRAY_INDEX_SHARE of the log plus LIMIT_XRAY_INDEX_FIXED_BYTES
 * (a log whose threads switch every few records is indexed up to there). */
#define LIMIT_XRAY_INDEX_SHARE      256u
#define LIMIT_XRAY_INDEX_FIXED_BYTES (4u << 20)
/* The coarse histograms of functions' durations the index pass fills
 * (7.5 KiB a function, for the functions first seen): at most
 * 1/LIMIT_XRAY_COARSE_SHARE of the log plus LIMIT_XRAY_COARSE_FIXED_BYTES
 * (140 functions of a 100 MB log; the others' ranks take a walk more). */
#define LIMIT_XRAY_COARSE_SHARE     1024u
#define LIMIT_XRAY_COARSE_FIXED_BYTES (1u << 20)
/* Runs merged at once (each reader of the merge holds a cursor per run). */
#define LIMIT_XRAY_RUNS             (1u << 14)
/* Checkpoints of the merges: at most one per this many records, and their
 * positions take at most 1/LIMIT_XRAY_CHECKPOINT_SHARE byte per record. */
#define LIMIT_XRAY_CHECKPOINT_RECORDS 1024u
#define LIMIT_XRAY_CHECKPOINT_SHARE 32u
/* Per thread (threads/<tid>/events), one every this many of its records
 * and 128 records per byte of positions. */
#define LIMIT_XRAY_THREAD_CHECKPOINT_RECORDS 4096u
#define LIMIT_XRAY_THREAD_CHECKPOINT_SHARE 128u
/* Custom and typed events listed under customevents/ and typedevents/
 * (8 bytes each): at most one per LIMIT_XRAY_EVENT_LOG_BYTES of log, plus 64 Ki. */
#define LIMIT_XRAY_EVENT_LOG_BYTES  1024u
/* Payload bytes of a custom or typed event shown as its `data` arg in the
 * common events (customevents/<n> has them all). */
#define LIMIT_XRAY_EVENT_DATA_ARG   4096u
/* Call depth tracked per thread; deeper frames are not matched to exits. */
#define LIMIT_XRAY_STACK_DEPTH      (1u << 16)
/* Sleds read from xray_instr_map (32 bytes each). */
#define LIMIT_XRAY_SLEDS            (1u << 24)
/* Bytes of the ELF sections read from the instrumented binary. */
#define LIMIT_XRAY_ELF_SECTION      (256u << 20)
/* FDR v1 buffer size from the header. */
#define LIMIT_XRAY_BUFFER_BYTES     (1ull << 32)
/* Side tables saved in the persistent index: bigger ones (a copy is held
 * while saving and loading) are rebuilt by the index pass instead. */
#define LIMIT_XRAY_SAVED_BYTES      (1ull << 30)
/* ---- sp-rtrace ---- */
/* Bytes of one packet: the largest real ones are BTRC with 256 frames. */
#define LIMIT_SPRT_PACKET_BYTES     (16u << 20)
/* Calls kept in the call table (64 bytes each): 2^28 is a 16 GiB table. */
#define LIMIT_SPRT_CALLS            (1u << 28)
/* MMAP, MINF, CTXR, FILE, RESR packets kept for the header text. */
#define LIMIT_SPRT_TABLE_ENTRIES    (1u << 16)
/* Resource type ids: postproc indexes a 33-entry table with them. */
#define LIMIT_SPRT_RESOURCE_ID      32u
/* Distinct allocation functions an async pair can be named after (the
 * first ones, in call order, of allocations that open a resource): pairs
 * of the ones after are named after their resource type. */
#define LIMIT_SPRT_PAIR_NAMES       1024u
/* Bytes of such a function name: a longer one is named by its resource type. */
#define LIMIT_SPRT_PAIR_NAME_BYTES  256u
/* Calls (two per pair) whose function is not among the few a three-bit
 * pair code holds, kept in a sorted list beside the codes (8 bytes each):
 * LIMIT_SPRT_PAIR_ESCAPES_BASE, plus one per LIMIT_SPRT_PAIR_ESCAPE_SPACING
 * bytes of log (0.1 % of it), at most LIMIT_SPRT_PAIR_ESCAPES; pairs past
 * them are named after their resource type. */
#define LIMIT_SPRT_PAIR_ESCAPES     (1u << 16)
#define LIMIT_SPRT_PAIR_ESCAPES_BASE 256u
#define LIMIT_SPRT_PAIR_ESCAPE_SPACING 8192u
/* Packet buffers a thread keeps for its next packets, and the largest it
 * keeps (a backtrace of 2,048 frames): a view reads three packets a call. */
#define LIMIT_SPRT_KEPT_PACKETS     2u
#define LIMIT_SPRT_KEPT_PACKET_BYTES (16u << 10)

#endif
