doctor
