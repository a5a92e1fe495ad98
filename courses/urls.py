from __future__ import annotations

from django.urls import URLPattern, path

from . import views_gradebook, views_similarity, views_tools

app_name = "courses"

urlpatterns: list[URLPattern] = [
    # The gradebook: learners x assignments, a rung's learners, a learner's Submits of a rung, the CSV.
    path("<slug:slug>/gradebook/", views_gradebook.gradebook, name="gradebook"),
    path("<slug:slug>/gradebook.csv", views_gradebook.gradebook_csv, name="gradebook-csv"),
    path("<slug:slug>/gradebook/<int:assignment_id>/<slug:rung_slug>/", views_gradebook.gradebook_rung, name="gradebook-rung"),
    path("<slug:slug>/gradebook/<int:assignment_id>/<slug:rung_slug>/learners/<int:user_id>/", views_gradebook.gradebook_attempts,
         name="gradebook-attempts"),
    # Teacher tools: a learner's timeline, feedback on a submission, common mistakes per rung.
    path("<slug:slug>/learners/<int:user_id>/timeline/", views_tools.timeline, name="timeline"),
    path("<slug:slug>/submissions/<int:pk>/feedback/", views_tools.submission_feedback, name="feedback"),
    path("<slug:slug>/rungs/<slug:rung_slug>/mistakes/", views_tools.mistakes, name="mistakes"),
    # Similarity reports of an assignment's rungs (course staff): the list and a request (POST), a report, a pair side by side.
    path("<slug:slug>/assignments/<int:assignment_id>/similarity/", views_similarity.similarity_reports, name="similarity"),
    path("<slug:slug>/similarity/<int:report_id>/", views_similarity.similarity_report, name="similarity-report"),
    path("<slug:slug>/similarity/<int:report_id>/pairs/<int:number>/", views_similarity.similarity_pair, name="similarity-pair"),
]
