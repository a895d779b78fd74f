#ifndef FOLIO_TEST_WATCHDOG_H
#define FOLIO_TEST_WATCHDOG_H

/// The seconds the test process may run before the watchdog stops it (`FOLIO_TEST_DEADLINE`, 1,800 by default;
/// 0 turns it off), as read when the process started.
long folio_test_watchdog_deadline(void);

#endif
