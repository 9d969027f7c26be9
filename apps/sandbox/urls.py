from django.urls import path

from apps.sandbox import comments, metrics, server

urlpatterns = [
    path("api/v1/posts", server.posts_endpoint, name="sandbox-posts"),
    path("api/v1/posts/<int:post_id>", server.post_status, name="sandbox-post-status"),
    path("api/v1/posts/<int:post_id>/comments", comments.list_comments),
    path("api/v1/comments/<int:comment_id>/replies", comments.comment_replies),
    path("api/v1/comments/<int:comment_id>", comments.delete_comment),
    path("api/v1/posts/<int:post_id>/metrics", metrics.metrics_endpoint),
    path("api/v1/me", metrics.me_endpoint),
    path("api/v1/media", server.upload_media, name="sandbox-media"),
    path("api/v1/oauth/token", server.oauth_token, name="sandbox-token"),
    path("posts", server.witness, name="sandbox-witness"),
    path("@<str:handle>/<int:post_id>", server.post_page, name="sandbox-post"),
]
