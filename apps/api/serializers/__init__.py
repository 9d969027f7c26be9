"""Input and output serializers of the API, one module per resource."""
