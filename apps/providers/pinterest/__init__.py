"""Pinterest: Pins on a chosen board, with one image, 2-5 images, or a video."""
