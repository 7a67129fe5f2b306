package io.fencekeeper.archive;

/**
 * Observes what retention did on this node (the API's metrics): each run archived with its
 * archive's size, and the rows each delete batch removed.
 */
public interface RetentionListener {

  RetentionListener NONE =
      new RetentionListener() {
        @Override
        public void runArchived(long bytes) {}

        @Override
        public void rowsDeleted(long rows) {}
      };

  void runArchived(long bytes);

  void rowsDeleted(long rows);
}
