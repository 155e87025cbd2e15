/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `launch learn` and `launch report`: read an audit log, print a policy or a summary. */
#ifndef LAUNCH_AUDITCMD_H
#define LAUNCH_AUDITCMD_H

/* launch learn AUDIT.jsonl [--sandbox ID] [--name NAME] [--wildcards]; returns the exit status. */
int auditcmd_learn(int argc, char **argv);
/* launch report AUDIT.jsonl; returns the exit status. */
int auditcmd_report(int argc, char **argv);

#endif /* LAUNCH_AUDITCMD_H */
