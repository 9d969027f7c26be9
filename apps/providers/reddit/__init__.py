"""Reddit: self, link, image and video posts to a chosen subreddit."""
