"""Facebook Pages: text and link posts, photos, videos processed before they publish; the
Page to publish as is chosen after the person who manages it connects."""
