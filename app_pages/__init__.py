"""Streamlit pages (UI only), run through st.navigation in app.py."""
