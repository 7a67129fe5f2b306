package io.fencekeeper.api.items;

import io.fencekeeper.api.http.ApiError;
import io.fencekeeper.api.http.ApiResponse;
import io.fencekeeper.item.WorkItem;
import java.util.HashMap;
import java.util.Map;

/** Every {@link WorkItem.Reply} as an HTTP answer: rejections are 4xx answers, not failures. */
final class ItemReplies {

  private ItemReplies() {}

  static ApiResponse toResponse(WorkItem.Reply reply) {
    if (reply instanceof WorkItem.Claimed claimed) {
      return ApiResponse.ok(ApiViews.ClaimView.of(claimed));
    }
    if (reply instanceof WorkItem.Accepted accepted) {
      return ApiResponse.ok(accepted.item());
    }
    throw toError(reply);
  }

  static ApiError toError(WorkItem.Reply reply) {
    if (reply instanceof WorkItem.LeaseLost lost) {
      Map<String, Object> extra = new HashMap<>();
      extra.put("presentedToken", lost.presentedToken());
      extra.put("currentToken", lost.currentToken());
      if (lost.status() != null) {
        extra.put("status", lost.status());
        // the caller's own lease ended the attempt already: a repeat after a lost answer
        extra.put(
            "endedByThisLease",
            lost.presentedToken() == lost.currentToken()
                && lost.status() != WorkItem.Status.LEASED
                && lost.status() != WorkItem.Status.CLOSED
                && lost.status() != WorkItem.Status.QUARANTINED);
      }
      return new ApiError(409, "lease_lost", "the lease is lost: " + lost.reason(), extra);
    }
    if (reply instanceof WorkItem.LeaseHeld held) {
      return new ApiError(
          409,
          "lease_held",
          "the item is leased by " + held.owner() + " until " + held.leaseExpiresAt(),
          Map.of(
              "owner", held.owner(),
              "leaseExpiresAt", held.leaseExpiresAt(),
              "currentToken", held.currentToken()));
    }
    if (reply instanceof WorkItem.NotClaimable notClaimable) {
      Map<String, Object> extra = new HashMap<>();
      extra.put("status", notClaimable.status());
      extra.put("retryAt", notClaimable.retryAt());
      return new ApiError(
          409, "not_claimable", "the item cannot be claimed: " + notClaimable.reason(), extra);
    }
    if (reply instanceof WorkItem.AlreadyRecorded) {
      return new ApiError(
          409, "already_recorded", "an effect is already recorded for this item; complete it");
    }
    if (reply instanceof WorkItem.Invalid invalid) {
      return new ApiError(422, "invalid", invalid.message(), Map.of("field", invalid.field()));
    }
    throw new IllegalStateException("unexpected reply " + reply.getClass().getSimpleName());
  }
}
