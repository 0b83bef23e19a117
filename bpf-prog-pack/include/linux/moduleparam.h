/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel header, as the host bench needs it: see shim.h. */
#include <shim.h>
