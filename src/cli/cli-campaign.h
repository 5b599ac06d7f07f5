/*
 * thermlog campaign's files (campaign.c: the command, check, list, show, report and the burst;
 * campaign-run.c: the runner), for src/cli/ alone.
 */
#ifndef CLI_CAMPAIGN_H
#define CLI_CAMPAIGN_H

#include "cli.h"

/** thermlog campaign run SUITE.yaml [--board NAME] [--resume] (campaign-run.c). */
int cli_campaign_run(struct cli_context *ctx, int argc, char **argv);

/**
 * The built-in all-core burst of the binning check: a busy loop on every online CPU for
 * @ms, in children of this process. 0, or -errno when none could be started.
 */
int cli_campaign_burst(int64_t ms);

#endif
