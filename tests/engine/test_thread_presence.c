/* engine/thread_presence.c: a stretch becomes known only when a learner
 * saw it whole; a thread's cursor jumps over known stretches without its
 * events, to their cuts, and ends in the last; the saved rows (kept only
 * once every stretch is known) come back the same, and bytes for other stretches, other threads, a bad flag or a
 * bit past the last thread are refused. */
#include <glib.h>
#include <string.h>
#include "saved_bytes.h"
#include "thread_presence.h"
#include "tracefs_limits.h"

/* Stretches [10, 20) [20, 30) [30, 40) [40, end): cuts at 20, 30, 40,
 * each cursor's word[1] marking which cut it is. */
static struct view_cursor cuts[3];

static struct thread_presence *presence_of_three_threads(void)
{
    for (int i = 0; i < 3; i++) {
        memset(&cuts[i], 0, sizeof cuts[i]);
        cuts[i].word[0] = 20 + 10 * (uint64_t)i;
        cuts[i].word[1] = 100 + (uint64_t)i;
    }
    struct thread_presence *presence = thread_presence_new(10, cuts, 3);
    g_assert_cmpuint(thread_presence_add_thread(presence, 1, 11), ==, 0);
    g_assert_cmpuint(thread_presence_add_thread(presence, 1, 12), ==, 1);
    g_assert_cmpuint(thread_presence_add_thread(presence, 2, 21), ==, 2);
    g_assert_cmpuint(thread_presence_add_thread(presence, 1, 12), ==, 1);   /* the same thread again */
    return presence;
}

static uint32_t known_count(const struct thread_presence *presence)
{
    uint32_t known, stretches;
    uint64_t skipped;
    thread_presence_counts(presence, &known, &stretches, &skipped);
    g_assert_cmpuint(stretches, ==, 4);
    return known;
}

/* Thread 1/11 in stretch 0 only, 1/12 in 0 and 3, 2/21 in 2; stretch 1
 * holds an event of a thread without a number. */
static void learn_all(struct thread_presence *presence, uint64_t start, gboolean whole)
{
    thread_presence_learn_begin(presence, start, UINT64_MAX);
    struct presence_learner *learner = thread_presence_learner(presence);
    g_assert_nonnull(learner);
    thread_presence_learn_event(learner, 12, 1, 11);
    thread_presence_learn_event(learner, 15, 1, 12);
    thread_presence_learn_event(learner, 25, 9, 99);
    thread_presence_learn_event(learner, 31, 2, 21);
    thread_presence_learn_event(learner, 45, 1, 12);
    thread_presence_learn_end(presence, whole);
    g_assert_null(thread_presence_learner(presence));
}

static void test_learn_and_skip(void)
{
    struct thread_presence *presence = presence_of_three_threads();
    struct view_cursor cursor = { .word = { 10 } };
    uint64_t end = 0;
    /* Nothing known: nothing skipped. */
    g_assert_true(thread_presence_skip(presence, 0, &cursor, &end));
    g_assert_cmpuint(cursor.word[0], ==, 10);
    /* A learner that did not end whole teaches nothing. */
    learn_all(presence, 10, FALSE);
    g_assert_cmpuint(known_count(presence), ==, 0);
    /* One begun inside stretch 0 does not know all of it. */
    learn_all(presence, 11, TRUE);
    g_assert_cmpuint(known_count(presence), ==, 3);
    g_assert_true(thread_presence_skip(presence, 2, &cursor, &end));
    g_assert_cmpuint(cursor.word[0], ==, 10);
    learn_all(presence, 10, TRUE);
    g_assert_cmpuint(known_count(presence), ==, 4);

    /* 2/21 jumps from stretch 0 over 1 to the cut at 30, with its words. */
    cursor = (struct view_cursor){ .word = { 12 } };
    g_assert_true(thread_presence_skip(presence, 2, &cursor, &end));
    g_assert_cmpuint(cursor.word[0], ==, 30);
    g_assert_cmpuint(cursor.word[1], ==, 101);
    /* 1/11 has nothing after stretch 0: its view ends. */
    cursor = (struct view_cursor){ .word = { 20 } };
    g_assert_false(thread_presence_skip(presence, 0, &cursor, &end));
    /* 1/12 is in stretch 0 (stays) and 3 (jumps 1 and 2). */
    cursor = (struct view_cursor){ .word = { 19 } };
    g_assert_true(thread_presence_skip(presence, 1, &cursor, &end));
    g_assert_cmpuint(cursor.word[0], ==, 19);
    cursor = (struct view_cursor){ .word = { 20 } };
    g_assert_true(thread_presence_skip(presence, 1, &cursor, &end));
    g_assert_cmpuint(cursor.word[0], ==, 40);
    /* A thread without a number never skips. */
    cursor = (struct view_cursor){ .word = { 20 } };
    g_assert_true(thread_presence_skip(presence, UINT32_MAX, &cursor, &end));
    g_assert_cmpuint(cursor.word[0], ==, 20);
    cursor = (struct view_cursor){ .word = { 29 } };
    g_assert_true(thread_presence_skip(presence, UINT32_MAX, &cursor, &end));
    g_assert_cmpuint(end, ==, 30);
    cursor = (struct view_cursor){ .word = { 40 } };
    g_assert_true(thread_presence_skip(presence, UINT32_MAX, &cursor, &end));
    g_assert_cmpuint(end, ==, UINT64_MAX);
    thread_presence_free(presence);
}

static GByteArray *saved(struct thread_presence *presence)
{
    struct saved_writer *writer = saved_writer_new();
    thread_presence_save(presence, writer);
    GByteArray *bytes = saved_writer_join(writer);
    saved_writer_free(writer);
    return bytes;
}

static gboolean load(struct thread_presence *presence, const GByteArray *bytes)
{
    struct saved_reader reader;
    saved_reader_init(&reader, bytes->data, bytes->len);
    return thread_presence_load(presence, &reader) && reader.at == reader.size;
}

/* A learner knows the stretches it covers only: begun at the cut at 30,
 * stretches 2 and 3. */
static void test_learns_what_it_covers(void)
{
    struct thread_presence *presence = presence_of_three_threads();
    thread_presence_learn_begin(presence, 30, UINT64_MAX);
    struct presence_learner *learner = thread_presence_learner(presence);
    thread_presence_learn_event(learner, 31, 2, 21);
    thread_presence_learn_end(presence, TRUE);
    g_assert_cmpuint(known_count(presence), ==, 2);
    struct view_cursor cursor = { .word = { 10 } };
    uint64_t end = 0;
    g_assert_true(thread_presence_skip(presence, 0, &cursor, &end));       /* stretch 0 unknown */
    g_assert_cmpuint(cursor.word[0], ==, 10);
    cursor = (struct view_cursor){ .word = { 30 } };
    g_assert_false(thread_presence_skip(presence, 0, &cursor, &end));      /* 1/11: in neither 2 nor 3 */
    cursor = (struct view_cursor){ .word = { 35 } };
    g_assert_true(thread_presence_skip(presence, 2, &cursor, &end));       /* 2/21 is in 2 */
    g_assert_cmpuint(cursor.word[0], ==, 35);
    /* Some stretches known, not all: the saved index keeps none. */
    GByteArray *bytes = saved(presence);
    g_assert_cmpuint(bytes->len, ==, 8 * (2 + 4));
    struct thread_presence *loaded = presence_of_three_threads();
    g_assert_true(load(loaded, bytes));
    g_assert_cmpuint(known_count(loaded), ==, 0);
    thread_presence_free(loaded);
    g_byte_array_free(bytes, TRUE);
    thread_presence_free(presence);
}

static void test_save_and_load(void)
{
    struct thread_presence *learned = presence_of_three_threads();
    learn_all(learned, 10, TRUE);
    GByteArray *bytes = saved(learned);
    struct thread_presence *loaded = presence_of_three_threads();
    g_assert_true(load(loaded, bytes));
    g_assert_cmpuint(known_count(loaded), ==, 4);
    GByteArray *again = saved(loaded);
    g_assert_cmpmem(again->data, again->len, bytes->data, bytes->len);
    g_byte_array_free(again, TRUE);
    thread_presence_free(loaded);

    /* The layout: stretches, threads, then per stretch its flag and one
     * word (three threads).  Each forgery is refused and loads nothing. */
    g_assert_cmpuint(bytes->len, ==, 8 * (2 + 4 * 2));
    for (int forgery = 0; forgery < 5; forgery++) {
        GByteArray *forged = g_byte_array_new();
        g_byte_array_append(forged, bytes->data, bytes->len);
        uint64_t *words = (uint64_t *)(void *)forged->data;
        switch (forgery) {
        case 0: words[0] = 5; break;                    /* other stretches */
        case 1: words[1] = 4; break;                    /* other threads */
        case 2: words[2] = 2; break;                    /* a flag neither 0 nor 1 */
        case 3: words[3] |= UINT64_C(1) << 3; break;    /* a bit past thread 2 */
        case 4: g_byte_array_set_size(forged, forged->len - 8); break;   /* cut short */
        }
        struct thread_presence *presence = presence_of_three_threads();
        g_assert_false(load(presence, forged));
        g_assert_cmpuint(known_count(presence), ==, 0);
        thread_presence_free(presence);
        g_byte_array_free(forged, TRUE);
    }
    g_byte_array_free(bytes, TRUE);
    thread_presence_free(learned);
}

/* Cuts that do not rise from the begin make no presence. */
static void test_cuts_must_rise(void)
{
    struct thread_presence *presence = presence_of_three_threads();   /* sets the cuts */
    thread_presence_free(presence);
    g_assert_null(thread_presence_new(20, cuts, 3));
    cuts[2].word[0] = 30;
    g_assert_null(thread_presence_new(10, cuts, 3));
    g_assert_nonnull(presence = thread_presence_new(10, cuts, 2));
    thread_presence_free(presence);
}

/* Past LIMIT_PRESENCE_THREADS threads get no number. */
static void test_thread_limit(void)
{
    struct thread_presence *presence = presence_of_three_threads();
    for (uint32_t t = 3; t < LIMIT_PRESENCE_THREADS; t++)
        g_assert_cmpuint(thread_presence_add_thread(presence, 7, t), ==, t);
    g_assert_cmpuint(thread_presence_add_thread(presence, 8, 0), ==, UINT32_MAX);
    thread_presence_free(presence);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/thread-presence/learn-and-skip", test_learn_and_skip);
    g_test_add_func("/thread-presence/learns-what-it-covers", test_learns_what_it_covers);
    g_test_add_func("/thread-presence/save-and-load", test_save_and_load);
    g_test_add_func("/thread-presence/thread-limit", test_thread_limit);
    g_test_add_func("/thread-presence/cuts-must-rise", test_cuts_must_rise);
    return g_test_run();
}
