from __future__ import annotations

from django.urls import URLPattern, path

from . import views, views_gradebook, views_similarity, views_tools

app_name = "courses"

urlpatterns: list[URLPattern] = [
    # The gradebook: learners x assignments, a rung's learners, a learner's Submits of a rung, the CSV.
    path("<slug:slug>/gradebook/", views_gradebook.gradebook, name="gradebook"),
    path("<slug:slug>/gradebook.csv", views_gradebook.gradebook_csv, name="gradebook-csv"),
    path("<slug:slug>/gradebook/<int:assignment_id>/<slug:rung_slug>/", views_gradebook.gradebook_rung, name="gradebook-rung"),
    path("<slug:slug>/gradebook/<int:assignment_id>/<slug:rung_slug>/learners/<int:user_id>/", views_gradebook.gradebook_attempts,
         name="gradebook-attempts"),
    # Courses, enrolment and assignments (courses.views). "new" and "join" come
    # before "<slug>/": CourseForm refuses them as a course's slug.
    path("", views.home, name="home"),
    path("new/", views.course_create, name="create"),
    path("join/", views.join_by_code, name="join-by-code"),
    path("join/<str:code>/", views.join, name="join"),
    path("<slug:slug>/", views.course_detail, name="course"),
    path("<slug:slug>/edit/", views.course_edit, name="edit"),
    path("<slug:slug>/staff/", views.staff, name="staff"),
    path("<slug:slug>/staff/<int:user_id>/role/", views.staff_role, name="staff-role"),
    path("<slug:slug>/staff/<int:user_id>/remove/", views.staff_remove, name="staff-remove"),
    path("<slug:slug>/links/new/", views.link_create, name="link-create"),
    path("<slug:slug>/links/<int:pk>/revoke/", views.link_revoke, name="link-revoke"),
    path("<slug:slug>/roster/", views.roster_upload, name="roster-upload"),
    path("<slug:slug>/learners/<int:user_id>/remove/", views.learner_remove, name="learner-remove"),
    path("<slug:slug>/assignments/new/", views.assignment_new, name="assignment-new"),
    path("<slug:slug>/assignments/<int:pk>/", views.assignment_detail, name="assignment"),
    path("<slug:slug>/assignments/<int:pk>/edit/", views.assignment_edit, name="assignment-edit"),
    path("<slug:slug>/assignments/<int:pk>/delete/", views.assignment_delete, name="assignment-delete"),
    path("<slug:slug>/assignments/<int:pk>/extensions/", views.extension_grant, name="extension-grant"),
    path("<slug:slug>/assignments/<int:pk>/extensions/<int:user_id>/remove/", views.extension_remove, name="extension-remove"),
    # Teacher tools: a learner's timeline, feedback on a submission, common mistakes per rung.
    path("<slug:slug>/tools/", views_tools.tools, name="tools"),
    path("<slug:slug>/learners/<int:user_id>/timeline/", views_tools.timeline, name="timeline"),
    path("<slug:slug>/submissions/<int:pk>/feedback/", views_tools.submission_feedback, name="feedback"),
    path("<slug:slug>/rungs/<slug:rung_slug>/mistakes/", views_tools.mistakes, name="mistakes"),
    path("<slug:slug>/rungs/<slug:rung_slug>/speed/", views_tools.speed_boards, name="speed-boards"),
    # Similarity reports of an assignment's rungs (course staff): the list and a request (POST), a report, a pair side by side.
    path("<slug:slug>/assignments/<int:assignment_id>/similarity/", views_similarity.similarity_reports, name="similarity"),
    path("<slug:slug>/similarity/<int:report_id>/", views_similarity.similarity_report, name="similarity-report"),
    path("<slug:slug>/similarity/<int:report_id>/pairs/<int:number>/", views_similarity.similarity_pair, name="similarity-pair"),
]
