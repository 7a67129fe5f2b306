package io.fencekeeper.api.http;

import java.time.Duration;
import org.apache.pekko.Done;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.BidiShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * A connection must deliver each request head within {@code timeout} of being free to send one:
 * from when it was accepted, and again from when the answer to its last request has been written.
 * Pekko HTTP bounds a connection's silence ({@code idle-timeout}, 60 s) but not how long a head may
 * take, so a client that sends nothing, half a header or a byte now and then would hold one of the
 * server's connections for as long as it likes, before any authentication (docs/security.md, "In
 * front of an exposed node"). Past the deadline the connection is closed. While a request is being
 * answered (a long upload, a live stream) no deadline runs.
 *
 * <p>Between pekko's server layer and the API's handler: requests in at the top, answers out at the
 * bottom.
 */
final class RequestHeadDeadline
    extends GraphStage<BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse>> {

  private static final String DEADLINE = "request-head-deadline";

  private final Duration timeout;
  private final Inlet<HttpRequest> requestIn = Inlet.create("RequestHeadDeadline.requestIn");
  private final Outlet<HttpRequest> requestOut = Outlet.create("RequestHeadDeadline.requestOut");
  private final Inlet<HttpResponse> answerIn = Inlet.create("RequestHeadDeadline.answerIn");
  private final Outlet<HttpResponse> answerOut = Outlet.create("RequestHeadDeadline.answerOut");
  private final BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape =
      BidiShape.of(requestIn, requestOut, answerIn, answerOut);

  RequestHeadDeadline(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("fencekeeper.http.request-head-timeout must be positive");
    }
    this.timeout = timeout;
  }

  @Override
  public BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes attributes) {
    return new TimerGraphStageLogic(shape) {
      /** Requests whose answer has not been written to the end yet. */
      private int open;

      private AsyncCallback<Done> bodyWritten;

      {
        setHandler(
            requestIn,
            new AbstractInHandler() {
              @Override
              public void onPush() {
                cancelTimer(DEADLINE);
                open++;
                push(requestOut, grab(requestIn));
              }

              @Override
              public void onUpstreamFinish() {
                complete(requestOut); // the client sends no more; its answers still go out
              }
            });
        setHandler(
            requestOut,
            new AbstractOutHandler() {
              @Override
              public void onPull() {
                pull(requestIn);
              }

              @Override
              public void onDownstreamFinish(Throwable cause) {
                cancel(requestIn);
              }
            });
        setHandler(
            answerIn,
            new AbstractInHandler() {
              @Override
              public void onPush() {
                push(answerOut, watched(grab(answerIn)));
              }

              @Override
              public void onUpstreamFinish() {
                complete(answerOut);
              }
            });
        setHandler(
            answerOut,
            new AbstractOutHandler() {
              @Override
              public void onPull() {
                pull(answerIn);
              }

              @Override
              public void onDownstreamFinish(Throwable cause) {
                cancel(answerIn);
              }
            });
      }

      @Override
      public void preStart() {
        bodyWritten = createAsyncCallback(done -> answered());
        waitForHead();
      }

      private void answered() {
        open--;
        waitForHead();
      }

      private void waitForHead() {
        if (open == 0) {
          scheduleOnce(DEADLINE, timeout);
        }
      }

      /** A strict answer is written at once; a streamed one counts until its body has ended. */
      private HttpResponse watched(HttpResponse answer) {
        if (answer.entity().isStrict()) {
          answered();
          return answer;
        }
        Flow<ByteString, ByteString, Object> watch =
            Flow.<ByteString>create()
                .watchTermination(
                    (mat, done) -> {
                      done.whenComplete((ok, failure) -> bodyWritten.invoke(Done.getInstance()));
                      return (Object) mat;
                    });
        // the Java model has no transformDataBytes; the Scala entity is the same object
        return answer.withEntity(
            ((org.apache.pekko.http.scaladsl.model.ResponseEntity) answer.entity())
                .transformDataBytes(watch.asScala()));
      }

      @Override
      public void onTimer(Object key) {
        completeStage(); // the head did not come in time: close the connection
      }
    };
  }
}
