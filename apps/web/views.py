from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.permissions import workspaces_for


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "web/home.html", {"workspaces": workspaces_for(request.user)})
