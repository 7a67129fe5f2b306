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
      return new ApiError(
          409,
          "lease_lost",
          "the lease is lost: " + lost.reason(),
          Map.of("presentedToken", lost.presentedToken(), "currentToken", lost.currentToken()));
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
