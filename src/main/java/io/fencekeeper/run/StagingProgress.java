package io.fencekeeper.run;

import io.fencekeeper.CborSerializable;

/**
 * How far a STAGING run's scope has come: rows staged so far, rows per second lately (over the last
 * five seconds; 0 while its stager is not heard from), and how often a stager took it over after
 * its own was gone.
 */
public record StagingProgress(long rowsStaged, double rowsPerSecond, int resumes)
    implements CborSerializable {}
